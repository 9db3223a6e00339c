"""Repeat detection: payouts.repeat_key (indexed) and the repeat_acknowledgements table.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa
from alembic import op

from payflow.model import repeat_key

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

BACKFILL_ROWS = 5_000


def upgrade() -> None:
    with op.batch_alter_table("payouts") as batch:
        batch.add_column(sa.Column("repeat_key", sa.String(length=64), nullable=True))
        batch.create_index("ix_payouts_repeat_key", ["repeat_key", "state"], unique=False)
    op.create_table(
        "repeat_acknowledgements",
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("acknowledged_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("batch_id"),
    )
    _backfill()


def _backfill() -> None:
    # Payouts registered before this revision get their key too, so they are found as repeats.
    connection = op.get_bind()
    payouts = sa.table(
        "payouts",
        sa.column("id", sa.Integer),
        sa.column("requisites", sa.String),
        sa.column("amount", sa.String),
        sa.column("currency", sa.String),
        sa.column("repeat_key", sa.String),
    )
    after = 0
    while True:
        rows = connection.execute(
            sa.select(payouts.c.id, payouts.c.requisites, payouts.c.amount, payouts.c.currency)
            .where(payouts.c.id > after)
            .order_by(payouts.c.id)
            .limit(BACKFILL_ROWS)
        ).all()
        if not rows:
            return
        connection.execute(
            sa.update(payouts)
            .where(payouts.c.id == sa.bindparam("row_id"))
            .values(repeat_key=sa.bindparam("key")),
            [
                {
                    "row_id": row.id,
                    "key": repeat_key(
                        requisites=row.requisites, amount=Decimal(row.amount), currency=row.currency
                    ),
                }
                for row in rows
            ],
        )
        after = rows[-1].id


def downgrade() -> None:
    op.drop_table("repeat_acknowledgements")
    with op.batch_alter_table("payouts") as batch:
        batch.drop_index("ix_payouts_repeat_key")
        batch.drop_column("repeat_key")
