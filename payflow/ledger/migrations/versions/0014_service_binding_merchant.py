"""The merchant whose API token a ledger's rows were sent with, beside the kind of service.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("service_binding", schema=None) as batch_op:
        batch_op.add_column(sa.Column("merchant_id", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("service_binding", schema=None) as batch_op:
        batch_op.drop_column("merchant_id")
