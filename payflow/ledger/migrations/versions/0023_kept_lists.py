"""The service's lists a paying process fetched, kept for makers' processes without the API
token, and the rows registered without their bank or service checked (checked before sending).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "kept_lists",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "unchecked_rows",
        sa.Column("external_id", sa.String(255), primary_key=True),
        sa.Column("batch_id", sa.String(128), nullable=False),
        sa.Column("checks", sa.String(32), nullable=False),
    )
    op.create_index("ix_unchecked_rows_batch_id", "unchecked_rows", ["batch_id"])


def downgrade() -> None:
    op.drop_index("ix_unchecked_rows_batch_id", table_name="unchecked_rows")
    op.drop_table("unchecked_rows")
    op.drop_table("kept_lists")
