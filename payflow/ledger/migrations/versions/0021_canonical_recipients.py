"""Canonical recipients (design.md, invariant 11): repeat_key over the canonical requisites, and
payouts.user_key / name_key (indexed) to find the same person paid the same amount.

Every payout registered before gets its keys computed here, so a row of a file paid before this
revision is found as a repeat of a row written another way, or to other requisites, after it.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29
"""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa
from alembic import op

from payflow.model import person_key, repeat_key
from payflow.schemas.recipients import canonical_requisites

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | None = None
depends_on: str | None = None

BACKFILL_ROWS = 5_000


def upgrade() -> None:
    with op.batch_alter_table("payouts", schema=None) as batch:
        batch.add_column(sa.Column("user_key", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("name_key", sa.String(length=64), nullable=True))
        batch.create_index("ix_payouts_user_key", ["user_key", "state"], unique=False)
        batch.create_index("ix_payouts_name_key", ["name_key", "state"], unique=False)
    _backfill()


def _backfill() -> None:
    connection = op.get_bind()
    payouts = sa.table(
        "payouts",
        sa.column("id", sa.Integer),
        sa.column("requisites", sa.String),
        sa.column("payment_type", sa.String),
        sa.column("amount", sa.String),
        sa.column("currency", sa.String),
        sa.column("user_id", sa.String),
        sa.column("name", sa.String),
        sa.column("repeat_key", sa.String),
        sa.column("user_key", sa.String),
        sa.column("name_key", sa.String),
    )
    read = (
        payouts.c.id,
        payouts.c.requisites,
        payouts.c.payment_type,
        payouts.c.amount,
        payouts.c.currency,
        payouts.c.user_id,
        payouts.c.name,
    )
    after = 0
    while True:
        rows = connection.execute(
            sa.select(*read).where(payouts.c.id > after).order_by(payouts.c.id).limit(BACKFILL_ROWS)
        ).all()
        if not rows:
            return
        connection.execute(
            sa.update(payouts)
            .where(payouts.c.id == sa.bindparam("row_id"))
            .values(
                repeat_key=sa.bindparam("key"),
                user_key=sa.bindparam("by_user"),
                name_key=sa.bindparam("by_name"),
            ),
            [_keys(row) for row in rows],
        )
        after = rows[-1].id


def _keys(row: sa.Row[tuple[int, str, str, str, str, str, str]]) -> dict[str, object]:
    amount = Decimal(row.amount)
    requisites = canonical_requisites(row.payment_type, row.requisites)
    return {
        "row_id": row.id,
        "key": repeat_key(requisites=requisites, amount=amount, currency=row.currency),
        "by_user": person_key("userId", row.user_id, amount, row.currency),
        "by_name": person_key("name", row.name, amount, row.currency),
    }


def downgrade() -> None:
    with op.batch_alter_table("payouts", schema=None) as batch:
        batch.drop_index("ix_payouts_name_key")
        batch.drop_index("ix_payouts_user_key")
        batch.drop_column("name_key")
        batch.drop_column("user_key")
