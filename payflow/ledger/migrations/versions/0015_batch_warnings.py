"""Warnings validation gave the maker, kept for the checker who approves in another process.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "batch_warnings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("row_number", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=False),
        sa.Column("column", sa.Text(), nullable=False),
        sa.Column("rule", sa.String(length=64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_batch_warnings_batch_id", "batch_warnings", ["batch_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_batch_warnings_batch_id", table_name="batch_warnings")
    op.drop_table("batch_warnings")
