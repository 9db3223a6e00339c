"""Alembic environment for the ledger: runs on the connection `payflow.ledger.db` hands over.

There is no alembic.ini: `db.alembic_config` builds the config in code so the migrations work
from an installed package.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from payflow.ledger.tables import Base


def run_migrations(connection: Connection) -> None:
    """Migrate on `connection`, inside the caller's (locked) transaction."""
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("the ledger migrations run online only, through Ledger.open")

_connection = context.config.attributes.get("connection")
if not isinstance(_connection, Connection):
    raise RuntimeError("run the ledger migrations through payflow.ledger.db.upgrade_to_head")
run_migrations(_connection)
