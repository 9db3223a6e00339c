"""The service's latest word per payout: how it was learned, whoever heard it; report versions.

`service_checks` was written by reconciliation only; every path that hears from the service
(webhook, poll, reconcile re-fetch, rerun check) now writes it, with `source` saying which.
`report_versions` records each reconciliation report written (who, when, what changed).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("service_checks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", sa.String(length=16), nullable=True))
    op.create_table(
        "report_versions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("csv_path", sa.Text(), nullable=False),
        sa.Column("xlsx_path", sa.Text(), nullable=False),
        sa.Column("made_by", sa.String(length=128), nullable=False),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("changes", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("figures", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("report_versions", schema=None) as batch_op:
        batch_op.create_index("ix_report_versions_batch_id", ["batch_id"], unique=False)


def downgrade() -> None:
    op.drop_table("report_versions")
    with op.batch_alter_table("service_checks", schema=None) as batch_op:
        batch_op.drop_column("source")
