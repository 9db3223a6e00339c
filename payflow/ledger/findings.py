"""Reconciliation's records in the ledger: findings with their history, the service's last word
per payout, and balance snapshots.

Findings are append-only in meaning: a row of `findings` holds the current state, and every
change to it (open, acknowledge, resolve, reopen, a new detail) is also written to
`finding_events`, so nothing about a finding changes without a trace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from sqlalchemy import Connection, Engine, func, insert, select, update
from sqlalchemy.orm import aliased

from payflow.ledger.db import batch_lock_key, take_lock
from payflow.ledger.records import LedgerError
from payflow.ledger.service_word import ServiceWord, WordSource, save_words
from payflow.ledger.tables import BalanceSnapshot, Finding, FindingEvent


class FindingKind(StrEnum):
    """What reconciliation found wrong with one source row."""

    STATUS_DIFFERS = "status_differs"
    AMOUNT_DIFFERS = "amount_differs"
    MISSING_AT_SERVICE = "missing_at_service"
    UNEXPECTED_AT_SERVICE = "unexpected_at_service"
    CORRECTED = "corrected_after_completion"
    STUCK = "stuck"
    PAID_TWICE = "paid_twice"
    NOT_RESUMED = "not_resumed"  # the watchdog found the batch's run dead and could not resume it


# Findings reconciliation does not detect, so it never resolves them ("no longer seen"): the
# watchdog's, about the batch (row 0), which an operator acknowledges.
NOT_RECONCILED_KINDS = frozenset({FindingKind.NOT_RESUMED.value})
BATCH_ROW = 0  # the row number of a finding about the whole batch


class FindingState(StrEnum):
    """Where a finding stands; only an operator acknowledges, only reconciliation resolves."""

    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


RECONCILE_ACTOR = "reconcile"


class UnknownFinding(LedgerError):
    """No finding with that id in that batch."""


@dataclass(frozen=True, slots=True)
class Detected:
    """A discrepancy one reconciliation saw on one row."""

    row_number: int
    external_id: str | None
    kind: FindingKind
    detail: str


@dataclass(frozen=True, slots=True)
class FindingView:
    """A finding as stored now."""

    id: int
    batch_id: str
    row_number: int
    external_id: str | None
    kind: str
    state: str
    detail: str
    opened_at: datetime
    updated_at: datetime
    # The latest acknowledgement (who, when, their note), if a person acknowledged it.
    acknowledged_by: str | None = None
    acknowledged_at: datetime | None = None
    acknowledged_note: str | None = None

    @property
    def acknowledgement(self) -> str | None:
        """`ops at 2026-11-29 06:40 UTC: asked the manager` (None: nobody acknowledged it)."""
        if self.acknowledged_by is None or self.acknowledged_at is None:
            return None
        when = f"{self.acknowledged_at:%Y-%m-%d %H:%M} UTC"
        note = f": {self.acknowledged_note}" if self.acknowledged_note else ""
        return f"{self.acknowledged_by} at {when}{note}"


@dataclass(frozen=True, slots=True)
class FindingEventView:
    """One line of a finding's history."""

    finding_id: int
    from_state: str | None
    to_state: str
    actor: str
    detail: str | None
    at: datetime


@dataclass(frozen=True, slots=True)
class FindingsSync:
    """What one reconciliation changed among the batch's findings."""

    opened: int = 0
    reopened: int = 0
    resolved: int = 0
    unchanged: int = 0


@dataclass(frozen=True, slots=True)
class ServiceView:
    """The service's answer about one payout at the last check; `found` False: it said 404."""

    external_id: str
    found: bool
    payout_id: str | None
    status: str | None
    status_message: str | None
    amount: Decimal | None
    currency: str | None


@dataclass(frozen=True, slots=True)
class BalanceLine:
    """One currency of a balance snapshot; None where the response did not say."""

    currency: str
    available: Decimal | None
    held: Decimal | None
    taken_at: datetime


def _event(
    connection: Connection,
    finding_id: int,
    before: str | None,
    after: str,
    actor: str,
    detail: str | None,
    now: datetime,
) -> None:
    connection.execute(
        insert(FindingEvent).values(
            finding_id=finding_id,
            from_state=before,
            to_state=after,
            actor=actor,
            detail=detail,
            at=now,
        )
    )


def _one_writer_per_batch(connection: Connection, batch_id: str) -> None:
    # These writes read, then insert or update: two reconciliations of one batch at once (two pay
    # runs of it, or a run beside `reconcile-recent`) would both insert the same keys. SQLite's
    # BEGIN IMMEDIATE already serialises them; PostgreSQL needs the lock.
    take_lock(connection, batch_lock_key("findings", batch_id))


def sync_findings(
    engine: Engine,
    batch_id: str,
    detected: Iterable[Detected],
    *,
    unchecked_rows: set[int],
    now: datetime,
) -> FindingsSync:
    """Open new findings, reopen resolved ones seen again, resolve those no longer seen.

    Findings of rows in `unchecked_rows` (the service could not be asked) are left as they are.
    """
    seen = {(d.row_number, d.kind.value): d for d in detected}
    opened = reopened = resolved = unchanged = 0
    with engine.begin() as connection:
        _one_writer_per_batch(connection, batch_id)
        existing = {
            (row.row_number, row.kind): row
            for row in connection.execute(select(Finding).where(Finding.batch_id == batch_id))
        }
        for key, found in seen.items():
            row = existing.get(key)
            if row is None:
                inserted = connection.execute(
                    insert(Finding).values(
                        batch_id=batch_id,
                        row_number=found.row_number,
                        external_id=found.external_id,
                        kind=found.kind.value,
                        state=FindingState.OPEN.value,
                        detail=found.detail,
                        opened_at=now,
                        updated_at=now,
                    )
                ).inserted_primary_key
                assert inserted is not None
                finding_id = int(inserted[0])
                _event(connection, finding_id, None, "open", RECONCILE_ACTOR, found.detail, now)
                opened += 1
                continue
            state = FindingState.OPEN.value if row.state == "resolved" else row.state
            if state == row.state and found.detail == row.detail:
                unchanged += 1
                continue
            connection.execute(
                update(Finding)
                .where(Finding.id == row.id)
                .values(state=state, detail=found.detail, updated_at=now)
            )
            _event(connection, row.id, row.state, state, RECONCILE_ACTOR, found.detail, now)
            reopened += row.state == "resolved"
            unchanged += row.state != "resolved"
        for key, row in existing.items():
            if key in seen or row.state == "resolved" or row.row_number in unchecked_rows:
                continue
            if row.kind in NOT_RECONCILED_KINDS:
                continue
            connection.execute(
                update(Finding).where(Finding.id == row.id).values(state="resolved", updated_at=now)
            )
            _event(
                connection, row.id, row.state, "resolved", RECONCILE_ACTOR, "no longer seen", now
            )
            resolved += 1
    return FindingsSync(opened, reopened, resolved, unchanged)


def open_batch_finding(
    engine: Engine, batch_id: str, kind: FindingKind, detail: str, *, actor: str, now: datetime
) -> bool:
    """Open (or reopen) a finding about the whole batch; True when it was not open already."""
    with engine.begin() as connection:
        _one_writer_per_batch(connection, batch_id)
        row = connection.execute(
            select(Finding).where(
                Finding.batch_id == batch_id,
                Finding.row_number == BATCH_ROW,
                Finding.kind == kind.value,
            )
        ).first()
        if row is None:
            inserted = connection.execute(
                insert(Finding).values(
                    batch_id=batch_id,
                    row_number=BATCH_ROW,
                    external_id=None,
                    kind=kind.value,
                    state=FindingState.OPEN.value,
                    detail=detail,
                    opened_at=now,
                    updated_at=now,
                )
            ).inserted_primary_key
            assert inserted is not None
            _event(connection, int(inserted[0]), None, "open", actor, detail, now)
            return True
        if row.state != FindingState.RESOLVED.value:
            return False  # open, or acknowledged by an operator: said once is enough
        connection.execute(
            update(Finding)
            .where(Finding.id == row.id)
            .values(state=FindingState.OPEN.value, detail=detail, updated_at=now)
        )
        _event(connection, row.id, row.state, "open", actor, detail, now)
        return True


def acknowledge(
    engine: Engine, batch_id: str, finding_id: int, *, actor: str, note: str, now: datetime
) -> FindingView:
    """An operator has read the finding: open -> acknowledged, with their note in the history."""
    with engine.begin() as connection:
        _one_writer_per_batch(connection, batch_id)
        row = connection.execute(
            select(Finding).where(Finding.id == finding_id, Finding.batch_id == batch_id)
        ).first()
        if row is None:
            raise UnknownFinding(f"no finding {finding_id} in batch {batch_id!r}")
        after = "acknowledged" if row.state == "open" else row.state
        if after != row.state:
            connection.execute(
                update(Finding).where(Finding.id == finding_id).values(state=after, updated_at=now)
            )
        _event(connection, finding_id, row.state, after, actor, note, now)
    return next(f for f in list_findings(engine, batch_id) if f.id == finding_id)


def list_findings(engine: Engine, batch_id: str) -> list[FindingView]:
    """The batch's findings, by row then kind, each with its latest acknowledgement."""
    latest_ack = (
        select(FindingEvent.finding_id, func.max(FindingEvent.id).label("event_id"))
        .where(FindingEvent.to_state == "acknowledged")
        .group_by(FindingEvent.finding_id)
        .subquery()
    )
    ack = aliased(FindingEvent, name="ack")
    query = (
        select(
            *Finding.__table__.c,
            ack.actor.label("acknowledged_by"),
            ack.at.label("acknowledged_at"),
            ack.detail.label("acknowledged_note"),
        )
        .outerjoin(latest_ack, latest_ack.c.finding_id == Finding.id)
        .outerjoin(ack, ack.id == latest_ack.c.event_id)
        .where(Finding.batch_id == batch_id)
        .order_by(Finding.row_number, Finding.kind)
    )
    with engine.connect() as connection:
        return [FindingView(**row._mapping) for row in connection.execute(query)]


def finding_events(engine: Engine, finding_id: int) -> list[FindingEventView]:
    """The finding's history, oldest first."""
    query = (
        select(
            FindingEvent.finding_id,
            FindingEvent.from_state,
            FindingEvent.to_state,
            FindingEvent.actor,
            FindingEvent.detail,
            FindingEvent.at,
        )
        .where(FindingEvent.finding_id == finding_id)
        .order_by(FindingEvent.id)
    )
    with engine.connect() as connection:
        return [FindingEventView(**row._mapping) for row in connection.execute(query)]


def save_service_views(
    engine: Engine,
    batch_id: str,
    views: Sequence[ServiceView],
    now: datetime,
    source: WordSource = WordSource.RECONCILE,
) -> None:
    """Keep the service's answers for these payouts as their latest word (`service_word`)."""
    words = [
        ServiceWord(
            external_id=v.external_id,
            batch_id=batch_id,
            found=v.found,
            payout_id=v.payout_id,
            status=v.status,
            status_message=v.status_message,
            amount=v.amount,
            currency=v.currency,
            at=now,
            source=source,
        )
        for v in views
    ]
    # An upsert, not delete-then-insert: two reconciliations saving one payout at once (two
    # pay runs of a batch) both found nothing to delete, and the second insert failed.
    save_words(engine, words)


def save_balance(engine: Engine, batch_id: str, phase: str, lines: Sequence[BalanceLine]) -> None:
    """Store one snapshot of the merchant balance (one row per currency)."""
    if not lines:
        return
    with engine.begin() as connection:
        connection.execute(
            insert(BalanceSnapshot),
            [
                {
                    "batch_id": batch_id,
                    "phase": phase,
                    "currency": line.currency,
                    "available": line.available,
                    "held": line.held,
                    "taken_at": line.taken_at,
                }
                for line in lines
            ],
        )


def balance_snapshot(
    engine: Engine, batch_id: str, phase: str, *, first: bool
) -> list[BalanceLine]:
    """The first (or last) stored snapshot of `phase` for the batch; empty when none."""
    order = BalanceSnapshot.taken_at if first else BalanceSnapshot.taken_at.desc()
    with engine.connect() as connection:
        taken = connection.scalar(
            select(BalanceSnapshot.taken_at)
            .where(BalanceSnapshot.batch_id == batch_id, BalanceSnapshot.phase == phase)
            .order_by(order)
            .limit(1)
        )
        if taken is None:
            return []
        rows = connection.execute(
            select(
                BalanceSnapshot.currency,
                BalanceSnapshot.available,
                BalanceSnapshot.held,
                BalanceSnapshot.taken_at,
            )
            .where(
                BalanceSnapshot.batch_id == batch_id,
                BalanceSnapshot.phase == phase,
                BalanceSnapshot.taken_at == taken,
            )
            .order_by(BalanceSnapshot.currency)
        )
        return [BalanceLine(**row._mapping) for row in rows]
