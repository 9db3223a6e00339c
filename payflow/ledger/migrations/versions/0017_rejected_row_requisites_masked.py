"""The masked requisites (last four characters only) of a rejected or conflicting row, so the
report tells two such rows of one recipient apart from those of another.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("batch_rows", schema=None) as batch_op:
        batch_op.add_column(sa.Column("requisites_masked", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch_rows", schema=None) as batch_op:
        batch_op.drop_column("requisites_masked")
