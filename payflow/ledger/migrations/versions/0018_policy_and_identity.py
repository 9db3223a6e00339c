"""The approval policy as ledger data (versions), each batch's terms (policy version, approvals
needed, maker), operators with several roles and an OS account, command-line sessions and
one-time approval codes (both stored hashed).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("console_operators", schema=None) as batch_op:
        batch_op.alter_column(
            "role", existing_type=sa.String(length=16), type_=sa.String(length=64)
        )
        batch_op.add_column(sa.Column("os_account", sa.String(length=255), nullable=True))
        batch_op.create_unique_constraint("uq_console_operators_os_account", ["os_account"])
    op.create_table(
        "approval_policies",
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("proposed_by", sa.String(length=255), nullable=False),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("confirmed_by", sa.String(length=255), nullable=True),
        sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("version"),
    )
    op.create_table(
        "batch_terms",
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("steps", sa.Integer(), nullable=False),
        sa.Column("maker", sa.String(length=255), nullable=True),
        sa.Column("maker_via", sa.String(length=32), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.ForeignKeyConstraint(["policy_version"], ["approval_policies.version"]),
        sa.PrimaryKeyConstraint("batch_id"),
    )
    op.create_table(
        "operator_sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("operator", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    op.create_table(
        "approval_codes",
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("batch_id", sa.String(length=128), nullable=False),
        sa.Column("operator", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.batch_id"]),
        sa.PrimaryKeyConstraint("code_hash"),
    )
    with op.batch_alter_table("approval_codes", schema=None) as batch_op:
        batch_op.create_index("ix_approval_codes_batch_id", ["batch_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("approval_codes", schema=None) as batch_op:
        batch_op.drop_index("ix_approval_codes_batch_id")
    op.drop_table("approval_codes")
    op.drop_table("operator_sessions")
    op.drop_table("batch_terms")
    op.drop_table("approval_policies")
    with op.batch_alter_table("console_operators", schema=None) as batch_op:
        batch_op.drop_constraint("uq_console_operators_os_account", type_="unique")
        batch_op.drop_column("os_account")
        batch_op.alter_column(
            "role", existing_type=sa.String(length=64), type_=sa.String(length=16)
        )
