"""Named leases in the ledger: whoever takes one holds it alone until it expires.

Two watchdogs (or a watchdog and a console) looking at the same stranded batch both find it;
only the one that takes `resume:<batch>` starts its resuming run. A lease is also how a
notification is sent once (`notify:<event>:<batch>`). One INSERT or one conditional UPDATE:
the database decides who wins, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError

from payflow.ledger.db import dialect_insert
from payflow.ledger.ledger import Ledger
from payflow.ledger.tables import Lease


def take_lease(ledger: Ledger, name: str, holder: str, ttl: timedelta) -> bool:
    """True when `holder` now holds `name` for `ttl`: it was free, expired, or already its own."""
    now = ledger.now()
    values = {"holder": holder, "taken_at": now, "expires_at": now + ttl}
    try:
        with ledger.engine.begin() as conn:
            # RETURNING, not rowcount: an INSERT that did nothing reported -1 on PostgreSQL.
            inserted = conn.execute(
                dialect_insert(conn, Lease)
                .values(name=name, **values)
                .on_conflict_do_nothing(index_elements=["name"])
                .returning(Lease.name)
            ).first()
            if inserted is not None:
                return True
            taken = conn.execute(
                update(Lease)
                .where(Lease.name == name, (Lease.expires_at <= now) | (Lease.holder == holder))
                .values(**values)
                .returning(Lease.name)
            ).first()
    except IntegrityError:  # a racing insert between the two statements: the other one holds it
        return False
    return taken is not None


def release_lease(ledger: Ledger, name: str, holder: str) -> None:
    """Give the lease back early (only its holder can)."""
    with ledger.engine.begin() as conn:
        conn.execute(delete(Lease).where(Lease.name == name, Lease.holder == holder))
