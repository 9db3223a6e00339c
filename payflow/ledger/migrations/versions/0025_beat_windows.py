"""Each pay run's heartbeat records the window its own process keeps (PAYFLOW_RUN_STALE_AFTER):
a reader configured with a shorter window still waits the run's own before it counts it dead.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("pay_run_beats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stale_after_s", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("pay_run_beats", schema=None) as batch_op:
        batch_op.drop_column("stale_after_s")
