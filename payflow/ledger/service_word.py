"""The service's latest word per payout (table `service_checks`): what it last said, when, and
how it was learned, beside the ledger's own state (design invariant 9).

Every path that hears from the service writes it here: a webhook, a tracking poll (`payflow
status --refresh` polls too), a reconcile re-fetch and a rerun's check of its parents. Readers
derive a row's outcome from it (`totals.outcome_expr`), so a payout the platform moved after the
ledger's last state change reads as the service says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Engine

from payflow.ledger.db import dialect_insert
from payflow.ledger.tables import ServiceCheck


class WordSource(StrEnum):
    """How the ledger learned the service's word (`service_checks.source`)."""

    WEBHOOK = "webhook"
    POLL = "poll"
    RECONCILE = "reconcile"
    RERUN = "rerun"


@dataclass(frozen=True, slots=True)
class ServiceWord:
    """What the service said of one payout (found=False: it answered 404)."""

    external_id: str
    batch_id: str
    found: bool
    payout_id: str | None
    status: str | None
    status_message: str | None
    amount: Decimal | None
    currency: str | None
    at: datetime
    source: WordSource

    def row(self) -> dict[str, Any]:
        """The `service_checks` row of this word."""
        return {
            "external_id": self.external_id,
            "batch_id": self.batch_id,
            "found": self.found,
            "payout_id": self.payout_id,
            "status": self.status,
            "status_message": self.status_message,
            "amount": self.amount,
            "currency": self.currency,
            "checked_at": self.at,
            "source": self.source.value,
        }


def write_words(connection: Connection, words: Sequence[ServiceWord]) -> None:
    """Upsert the words in externalId order (as every multi-row write locks payouts), the last
    word of a payout winning: two writers of one payout never deadlock."""
    latest = {word.external_id: word for word in words}
    rows = [latest[ext].row() for ext in sorted(latest)]
    if not rows:
        return
    statement = dialect_insert(connection, ServiceCheck)
    replaced = {name: statement.excluded[name] for name in rows[0] if name != "external_id"}
    connection.execute(
        statement.on_conflict_do_update(index_elements=["external_id"], set_=replaced), rows
    )


def save_words(engine: Engine, words: Sequence[ServiceWord]) -> None:
    """`write_words` in a transaction of its own."""
    if words:
        with engine.begin() as connection:
            write_words(connection, words)
