"""The amount, paymentType and name a rejected or conflicting row's cells held, so the report
shows the operator the row to fix.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("batch_rows", schema=None) as batch_op:
        batch_op.add_column(sa.Column("amount", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("payment_type", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("name", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch_rows", schema=None) as batch_op:
        batch_op.drop_column("name")
        batch_op.drop_column("payment_type")
        batch_op.drop_column("amount")
