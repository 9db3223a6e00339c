"""The device that opened a claim first (the SHA-256 of a random cookie it was given): only that
device gets a widget link from the claim, so a second device is told it was used.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("link_claims", schema=None) as batch_op:
        batch_op.add_column(sa.Column("device_hash", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("link_claims", schema=None) as batch_op:
        batch_op.drop_column("device_hash")
