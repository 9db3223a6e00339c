"""An index of status events by source and time, so trackers see webhooks still coming in.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_status_events_source_at", "status_events", ["source", "at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_status_events_source_at", table_name="status_events")
