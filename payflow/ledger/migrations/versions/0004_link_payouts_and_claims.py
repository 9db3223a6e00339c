"""Payout links: payouts the recipient creates through the widget, and their claim tokens.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision: str = '0004'
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table('link_payouts',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=False),
    sa.Column('batch_id', sa.String(length=128), nullable=False),
    sa.Column('row_number', sa.Integer(), nullable=False),
    sa.Column('source_name', sa.Text(), nullable=False),
    sa.Column('user_id', sa.String(length=255), nullable=False),
    sa.Column('amount', sa.String(length=64), nullable=False),
    sa.Column('currency', sa.String(length=8), nullable=False),
    sa.Column('service_id', sa.Integer(), nullable=True),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('state', sa.String(length=24), nullable=False),
    sa.Column('payout_id', sa.String(length=64), nullable=True),
    sa.Column('status_message', sa.Text(), nullable=True),
    sa.Column('corrected', sa.Boolean(), nullable=False),
    sa.Column('links_minted', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_status_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('batch_id', 'row_number', name='uq_link_payouts_batch_row'),
    sa.UniqueConstraint('external_id'),
    sa.UniqueConstraint('payout_id')
    )
    with op.batch_alter_table('link_payouts', schema=None) as batch_op:
        batch_op.create_index('ix_link_payouts_batch_state', ['batch_id', 'state'], unique=False)

    op.create_table('link_claims',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=False),
    sa.Column('issued_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('opened_count', sa.Integer(), nullable=False),
    sa.Column('last_opened_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['external_id'], ['link_payouts.external_id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('token_hash')
    )
    with op.batch_alter_table('link_claims', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_link_claims_external_id'), ['external_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('link_claims', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_link_claims_external_id'))
    op.drop_table('link_claims')
    with op.batch_alter_table('link_payouts', schema=None) as batch_op:
        batch_op.drop_index('ix_link_payouts_batch_state')
    op.drop_table('link_payouts')
