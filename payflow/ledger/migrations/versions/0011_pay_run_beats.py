"""Pay runs' heartbeats, so a console tells a live run from one whose process died.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "pay_run_beats",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("run_id"),
    )
    op.create_index("ix_pay_run_beats_batch_id", "pay_run_beats", ["batch_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_pay_run_beats_batch_id", table_name="pay_run_beats")
    op.drop_table("pay_run_beats")
