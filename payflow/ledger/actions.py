"""The append-only action log: who did what to which batch, and when.

The console writes it for its operators; the pay flow writes the end of a run someone started
(`started_by`), so a run in a Prefect worker is recorded as finished like one in the console.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import desc, insert, select

from payflow.ledger.db import reader
from payflow.ledger.ledger import Ledger
from payflow.ledger.tables import ConsoleAction


@dataclass(frozen=True, slots=True)
class ActionView:
    """One line of the action log."""

    at: datetime
    actor: str
    action: str
    batch_id: str | None
    detail: str | None


def record_action(
    ledger: Ledger, actor: str, action: str, batch_id: str | None = None, detail: str | None = None
) -> None:
    """Append who did what and when; nothing ever updates or deletes a line."""
    with ledger.engine.begin() as conn:
        conn.execute(
            insert(ConsoleAction).values(
                at=ledger.now(), actor=actor, action=action, batch_id=batch_id, detail=detail
            )
        )


def actions_of(ledger: Ledger, batch_id: str) -> list[ActionView]:
    """The batch's actions, oldest first."""
    with reader(ledger.engine).connect() as conn:
        rows = conn.execute(
            select(ConsoleAction)
            .where(ConsoleAction.batch_id == batch_id)
            .order_by(ConsoleAction.id)
        ).all()
    return [ActionView(r.at, r.actor, r.action, r.batch_id, r.detail) for r in rows]


def last_action(ledger: Ledger, batch_id: str, *actions: str) -> ActionView | None:
    """The newest of the named actions on the batch, if any."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(
            select(ConsoleAction)
            .where(ConsoleAction.batch_id == batch_id, ConsoleAction.action.in_(actions))
            .order_by(desc(ConsoleAction.id))
            .limit(1)
        ).first()
    return ActionView(row.at, row.actor, row.action, row.batch_id, row.detail) if row else None
