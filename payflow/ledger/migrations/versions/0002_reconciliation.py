"""Reconciliation: the service's view per payout, findings with history, balance snapshots.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "service_checks",
        sa.Column("external_id", sa.String(length=255), nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("found", sa.Boolean(), nullable=False),
        sa.Column("payout_id", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=24), nullable=True),
        sa.Column("status_message", sa.Text(), nullable=True),
        sa.Column("amount", sa.String(length=64), nullable=True),
        sa.Column("currency", sa.String(length=8), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("external_id"),
    )
    with op.batch_alter_table("service_checks", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_service_checks_batch_id"), ["batch_id"], unique=False
        )
    op.create_table(
        "findings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("row_number", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("batch_id", "row_number", "kind", name="uq_findings_row_kind"),
    )
    op.create_table(
        "finding_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("finding_id", sa.Integer(), nullable=False),
        sa.Column("from_state", sa.String(length=16), nullable=True),
        sa.Column("to_state", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["finding_id"], ["findings.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("finding_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_finding_events_finding_id"), ["finding_id"], unique=False
        )
    op.create_table(
        "balance_snapshots",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("currency", sa.String(length=8), nullable=False),
        sa.Column("available", sa.String(length=64), nullable=True),
        sa.Column("held", sa.String(length=64), nullable=True),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("balance_snapshots", schema=None) as batch_op:
        batch_op.create_index(
            "ix_balance_snapshots_batch", ["batch_id", "phase", "taken_at"], unique=False
        )


def downgrade() -> None:
    op.drop_table("balance_snapshots")
    op.drop_table("finding_events")
    op.drop_table("findings")
    op.drop_table("service_checks")
