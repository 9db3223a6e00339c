"""An operator's own address for notifications (an e-mail address an admin sets): the maker of a
batch is told of its unpaid rows there, each checker of a batch waiting for them.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("console_operators", schema=None) as batch_op:
        batch_op.add_column(sa.Column("notify_to", sa.String(254), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("console_operators", schema=None) as batch_op:
        batch_op.drop_column("notify_to")
