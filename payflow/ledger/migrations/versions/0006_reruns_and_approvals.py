"""Reruns and approvals: attempt chains on payouts, rerun and maker on batches, approvals table.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rerun_of", sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column("made_by", sa.String(length=255), nullable=True))
    with op.batch_alter_table("payouts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("root_external_id", sa.String(length=255), nullable=True)
        )
        batch_op.add_column(
            sa.Column("attempt", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.create_index("ix_payouts_content_hash", ["content_hash"], unique=False)
        batch_op.create_index("ix_payouts_recipient", ["requisites", "currency"], unique=False)
        batch_op.create_unique_constraint(
            "uq_payouts_reruns_external_id", ["reruns_external_id"]
        )
        batch_op.create_unique_constraint(
            "uq_payouts_root_attempt", ["root_external_id", "attempt"]
        )
    op.create_table(
        "approvals",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("approver", sa.String(length=255), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("totals", sa.Text(), nullable=False),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.Column("acknowledged", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("via", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.create_index("ix_approvals_batch_id", ["batch_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.drop_index("ix_approvals_batch_id")
    op.drop_table("approvals")
    with op.batch_alter_table("payouts", schema=None) as batch_op:
        batch_op.drop_constraint("uq_payouts_root_attempt", type_="unique")
        batch_op.drop_constraint("uq_payouts_reruns_external_id", type_="unique")
        batch_op.drop_index("ix_payouts_recipient")
        batch_op.drop_index("ix_payouts_content_hash")
        batch_op.drop_column("attempt")
        batch_op.drop_column("root_external_id")
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.drop_column("made_by")
        batch_op.drop_column("rerun_of")
