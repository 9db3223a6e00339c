"""The currency a rejected or conflicting row named, so reports count it under that currency.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("batch_rows", schema=None) as batch_op:
        batch_op.add_column(sa.Column("currency", sa.String(length=3), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch_rows", schema=None) as batch_op:
        batch_op.drop_column("currency")
