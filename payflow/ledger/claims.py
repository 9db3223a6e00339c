"""Atomic claiming of rows for submission, and taking over the rows of crashed workers.

A claim is one transaction: select the rows (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so workers
never wait on each other's rows; SQLite: the transaction is `BEGIN IMMEDIATE`, so claims run one
after another), then move them. Rows of a batch are those it registered first, plus rows it found
ALREADY_KNOWN that nobody has sent yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Row,
    and_,
    exists,
    insert,
    or_,
    select,
    update,
)

from payflow.ledger.records import ClaimedPayout, Disposition
from payflow.ledger.states import EventSource, RowState, is_allowed
from payflow.ledger.tables import (
    INSTRUCTION_COLUMNS,
    BatchRow,
    Payout,
    StatusEvent,
    UncheckedRow,
    instruction_from_row,
)

_COLUMNS = [
    *INSTRUCTION_COLUMNS,
    Payout.id,
    Payout.batch_id,
    Payout.attempts,
    Payout.claimed_by,
]


def adopted_by(batch_id: str) -> ColumnElement[bool]:
    """Payouts another batch registered first that this batch listed as ALREADY_KNOWN."""
    return Payout.external_id.in_(
        select(BatchRow.external_id).where(
            BatchRow.batch_id == batch_id,
            BatchRow.disposition == Disposition.ALREADY_KNOWN.value,
        )
    )


def in_batch(batch_id: str) -> ColumnElement[bool]:
    """Every payout a batch is responsible for (its own, and the ones it adopted)."""
    return or_(Payout.batch_id == batch_id, adopted_by(batch_id))


def _expired(now: datetime) -> ColumnElement[bool]:
    return and_(
        Payout.state == RowState.SUBMITTING.value,
        or_(Payout.lease_until.is_(None), Payout.lease_until <= now),
    )


def _lock_rows(
    connection: Connection, batch_id: str, condition: ColumnElement[bool], limit: int
) -> list[Row[Any]]:
    # Own rows first through the (batch_id, state, id) index, then adopted ones, so a
    # million-row batch never scans the table per claim.
    own = (
        select(*_COLUMNS)
        .where(Payout.batch_id == batch_id, condition)
        .order_by(Payout.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    rows = list(connection.execute(own))
    if len(rows) < limit:
        adopted = (
            select(*_COLUMNS)
            .where(Payout.batch_id != batch_id, adopted_by(batch_id), condition)
            .order_by(Payout.id)
            .limit(limit - len(rows))
            .with_for_update(skip_locked=True)
        )
        rows.extend(connection.execute(adopted))
    return rows


def _claimed(
    row: Row[Any], attempts: int, lease_until: datetime, needs_resolution: bool
) -> ClaimedPayout:
    instruction = instruction_from_row(row)
    return ClaimedPayout(instruction, row.batch_id, attempts, lease_until, needs_resolution)


@dataclass(frozen=True, slots=True)
class _Lease:
    worker_id: str
    now: datetime
    until: datetime


def _record(
    connection: Connection,
    rows: Sequence[Row[Any]],
    from_state: RowState,
    source: EventSource,
    messages: Sequence[str | None],
    now: datetime,
) -> None:
    events = [
        {
            "external_id": row.external_id,
            "from_state": from_state.value,
            "to_state": RowState.SUBMITTING.value,
            "source": source.value,
            "at": now,
            "status_message": message,
        }
        for row, message in zip(rows, messages, strict=True)
    ]
    connection.execute(insert(StatusEvent), events)


def _take_over_expired(
    connection: Connection, batch_id: str, limit: int, lease: _Lease
) -> list[ClaimedPayout]:
    rows = _lock_rows(connection, batch_id, _expired(lease.now), limit)
    if not rows:
        return []
    connection.execute(
        update(Payout)
        .where(Payout.id.in_([row.id for row in rows]))
        .values(claimed_by=lease.worker_id, lease_until=lease.until, updated_at=lease.now)
    )
    messages = [f"lease of {r.claimed_by} expired; taken by {lease.worker_id}" for r in rows]
    _record(connection, rows, RowState.SUBMITTING, EventSource.RESOLVE, messages, lease.now)
    return [_claimed(row, row.attempts, lease.until, True) for row in rows]


def _claim_validated(
    connection: Connection, batch_id: str, limit: int, lease: _Lease
) -> list[ClaimedPayout]:
    assert is_allowed(RowState.VALIDATED, RowState.SUBMITTING)
    # A row registered without its bank or service checked is never sent while marked: the
    # paying process checks it first (`payflow.ledger.kept_lists`).
    checked = ~exists().where(UncheckedRow.external_id == Payout.external_id)
    sendable = and_(Payout.state == RowState.VALIDATED.value, checked)
    rows = _lock_rows(connection, batch_id, sendable, limit)
    if not rows:
        return []
    connection.execute(
        update(Payout)
        .where(Payout.id.in_([row.id for row in rows]), Payout.state == RowState.VALIDATED.value)
        .values(
            state=RowState.SUBMITTING.value,
            claimed_by=lease.worker_id,
            lease_until=lease.until,
            attempts=Payout.attempts + 1,
            updated_at=lease.now,
        )
    )
    # The claimer stays in the history after the lease is cleared: who sent each payout.
    claimed = [f"claimed by {lease.worker_id}"] * len(rows)
    _record(connection, rows, RowState.VALIDATED, EventSource.SUBMIT, claimed, lease.now)
    return [_claimed(row, row.attempts + 1, lease.until, False) for row in rows]


def claim(
    engine: Engine,
    batch_id: str,
    worker_id: str,
    limit: int,
    lease_seconds: float,
    now: datetime,
    *,
    resolution_only: bool,
) -> list[ClaimedPayout]:
    """Lease rows to `worker_id`: expired SUBMITTING rows first, new VALIDATED rows only if none."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    lease = _Lease(worker_id, now, now + timedelta(seconds=lease_seconds))
    with engine.begin() as connection:
        taken = _take_over_expired(connection, batch_id, limit, lease)
        # A crashed run's rows are resolved before anything new is sent (invariant 1).
        if taken or resolution_only:
            return taken
        return _claim_validated(connection, batch_id, limit, lease)


def release_leases(engine: Engine, batch_id: str, worker_id: str | None, now: datetime) -> int:
    """Expire the leases of a batch's SUBMITTING rows (of one worker, or all); returns how many."""
    conditions = [in_batch(batch_id), Payout.state == RowState.SUBMITTING.value]
    if worker_id is not None:
        conditions.append(Payout.claimed_by == worker_id)
    with engine.begin() as connection:
        result = connection.execute(
            update(Payout).where(*conditions).values(lease_until=now, updated_at=now)
        )
        return result.rowcount
