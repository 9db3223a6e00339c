"""Refunds: the refunds table, the rows of refund batches and the refund status history.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "refunds",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("row_number", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("order_id", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("amount_given", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("callback_url", sa.Text(), nullable=True),
        sa.Column("state", sa.String(length=24), nullable=False),
        sa.Column("refund_id", sa.String(length=64), nullable=True),
        sa.Column("status_message", sa.Text(), nullable=True),
        sa.Column("debit_amount", sa.String(length=64), nullable=True),
        sa.Column("debit_currency", sa.String(length=8), nullable=True),
        sa.Column("debit_basis", sa.String(length=32), nullable=True),
        sa.Column("order_status", sa.String(length=24), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claimed_by", sa.String(length=128), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("corrected", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_status_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("external_id"),
        sa.UniqueConstraint("refund_id"),
    )
    with op.batch_alter_table("refunds", schema=None) as batch_op:
        batch_op.create_index("ix_refunds_batch_state", ["batch_id", "state", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_refunds_order_id"), ["order_id"], unique=False)

    op.create_table(
        "refund_rows",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("row_number", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=True),
        sa.Column("order_id", sa.Text(), nullable=True),
        sa.Column("disposition", sa.String(length=16), nullable=False),
        sa.Column("reasons", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("batch_id", "row_number", name="uq_refund_rows_batch_row"),
    )
    op.create_table(
        "refund_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=False),
        sa.Column("from_state", sa.String(length=24), nullable=True),
        sa.Column("to_state", sa.String(length=24), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status_message", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["external_id"], ["refunds.external_id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("refund_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_refund_events_external_id"), ["external_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("refund_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_refund_events_external_id"))
    op.drop_table("refund_events")
    op.drop_table("refund_rows")
    with op.batch_alter_table("refunds", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_refunds_order_id"))
        batch_op.drop_index("ix_refunds_batch_state")
    op.drop_table("refunds")
