"""Initial ledger schema: batches, batch_rows, payouts and the append-only status_events.

Revision ID: 0001
Revises: 
Create Date: 2026-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table('batches',
    sa.Column('batch_id', sa.String(length=128), nullable=False),
    sa.Column('source_name', sa.Text(), nullable=False),
    sa.Column('total_rows', sa.Integer(), nullable=False),
    sa.Column('valid_rows', sa.Integer(), nullable=False),
    sa.Column('rejected_rows', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('batch_id')
    )
    op.create_table('batch_rows',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('batch_id', sa.String(length=128), nullable=False),
    sa.Column('row_number', sa.Integer(), nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=True),
    sa.Column('disposition', sa.String(length=16), nullable=False),
    sa.Column('reasons', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['batch_id'], ['batches.batch_id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('batch_id', 'row_number', name='uq_batch_rows_batch_row')
    )
    with op.batch_alter_table('batch_rows', schema=None) as batch_op:
        batch_op.create_index('ix_batch_rows_batch_disposition', ['batch_id', 'disposition'], unique=False)

    op.create_table('payouts',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=False),
    sa.Column('batch_id', sa.String(length=128), nullable=False),
    sa.Column('row_number', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('amount', sa.String(length=64), nullable=False),
    sa.Column('currency', sa.String(length=8), nullable=False),
    sa.Column('payment_type', sa.String(length=32), nullable=False),
    sa.Column('requisites', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('user_id', sa.String(length=255), nullable=False),
    sa.Column('service_id', sa.Integer(), nullable=True),
    sa.Column('bank_name', sa.String(length=255), nullable=True),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('user_email', sa.String(length=255), nullable=True),
    sa.Column('user_phone', sa.String(length=64), nullable=True),
    sa.Column('user_ip', sa.String(length=64), nullable=True),
    sa.Column('callback_url', sa.Text(), nullable=True),
    sa.Column('state', sa.String(length=24), nullable=False),
    sa.Column('payout_id', sa.String(length=64), nullable=True),
    sa.Column('status_message', sa.Text(), nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('claimed_by', sa.String(length=128), nullable=True),
    sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('corrected', sa.Boolean(), nullable=False),
    sa.Column('reruns_external_id', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_status_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('next_poll_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['batch_id'], ['batches.batch_id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('external_id'),
    sa.UniqueConstraint('payout_id')
    )
    with op.batch_alter_table('payouts', schema=None) as batch_op:
        batch_op.create_index('ix_payouts_batch_next_poll', ['batch_id', 'next_poll_at'], unique=False)
        batch_op.create_index('ix_payouts_batch_state', ['batch_id', 'state', 'id'], unique=False)

    op.create_table('status_events',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=False),
    sa.Column('from_state', sa.String(length=24), nullable=True),
    sa.Column('to_state', sa.String(length=24), nullable=False),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status_message', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['external_id'], ['payouts.external_id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('status_events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_status_events_external_id'), ['external_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('status_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_status_events_external_id'))

    op.drop_table('status_events')
    with op.batch_alter_table('payouts', schema=None) as batch_op:
        batch_op.drop_index('ix_payouts_batch_state')
        batch_op.drop_index('ix_payouts_batch_next_poll')

    op.drop_table('payouts')
    with op.batch_alter_table('batch_rows', schema=None) as batch_op:
        batch_op.drop_index('ix_batch_rows_batch_disposition')

    op.drop_table('batch_rows')
    op.drop_table('batches')
