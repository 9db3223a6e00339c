"""Atomic claiming of rows for submission, and taking over the rows of crashed workers.

A claim is one transaction: select the rows (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so workers
never wait on each other's rows; SQLite: the transaction is `BEGIN IMMEDIATE`, so claims run one
after another), then move them. Rows of a batch are those it registered first, plus rows it found
ALREADY_KNOWN that nobody has sent yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Row,
    and_,
    insert,
    or_,
    select,
    update,
)

from payflow.ledger.records import ClaimedPayout, Disposition
from payflow.ledger.states import EventSource, RowState, is_allowed
from payflow.ledger.tables import BatchRow, Payout, StatusEvent
from payflow.model import PayoutInstruction

_INSTRUCTION_FIELDS = (
    "row_number",
    "external_id",
    "amount",
    "currency",
    "payment_type",
    "requisites",
    "name",
    "user_id",
    "service_id",
    "bank_name",
    "note",
    "user_email",
    "user_phone",
    "user_ip",
    "callback_url",
)
_COLUMNS = [getattr(Payout, name) for name in _INSTRUCTION_FIELDS] + [
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
    instruction = PayoutInstruction(**{name: getattr(row, name) for name in _INSTRUCTION_FIELDS})
    return ClaimedPayout(instruction, row.batch_id, attempts, lease_until, needs_resolution)


def _events(
    rows: Sequence[Row[Any]],
    state: RowState,
    source: EventSource,
    message: str | None,
    now: datetime,
    from_state: RowState,
) -> list[dict[str, Any]]:
    return [
        {
            "external_id": row.external_id,
            "from_state": from_state.value,
            "to_state": state.value,
            "source": source.value,
            "at": now,
            "status_message": message,
        }
        for row in rows
    ]


def _take_over_expired(
    connection: Connection,
    batch_id: str,
    worker_id: str,
    limit: int,
    now: datetime,
    lease_until: datetime,
) -> list[ClaimedPayout]:
    rows = _lock_rows(connection, batch_id, _expired(now), limit)
    if not rows:
        return []
    connection.execute(
        update(Payout)
        .where(Payout.id.in_([row.id for row in rows]))
        .values(claimed_by=worker_id, lease_until=lease_until, updated_at=now)
    )
    events = [
        {**event, "status_message": f"lease of {row.claimed_by} expired; taken by {worker_id}"}
        for row, event in zip(
            rows,
            _events(rows, RowState.SUBMITTING, EventSource.RESOLVE, None, now, RowState.SUBMITTING),
            strict=True,
        )
    ]
    connection.execute(insert(StatusEvent), events)
    return [_claimed(row, row.attempts, lease_until, True) for row in rows]


def _claim_validated(
    connection: Connection,
    batch_id: str,
    worker_id: str,
    limit: int,
    now: datetime,
    lease_until: datetime,
) -> list[ClaimedPayout]:
    assert is_allowed(RowState.VALIDATED, RowState.SUBMITTING)
    rows = _lock_rows(connection, batch_id, Payout.state == RowState.VALIDATED.value, limit)
    if not rows:
        return []
    connection.execute(
        update(Payout)
        .where(Payout.id.in_([row.id for row in rows]), Payout.state == RowState.VALIDATED.value)
        .values(
            state=RowState.SUBMITTING.value,
            claimed_by=worker_id,
            lease_until=lease_until,
            attempts=Payout.attempts + 1,
            updated_at=now,
        )
    )
    connection.execute(
        insert(StatusEvent),
        _events(rows, RowState.SUBMITTING, EventSource.SUBMIT, None, now, RowState.VALIDATED),
    )
    return [_claimed(row, row.attempts + 1, lease_until, False) for row in rows]


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
    lease_until = now + timedelta(seconds=lease_seconds)
    with engine.begin() as connection:
        taken = _take_over_expired(connection, batch_id, worker_id, limit, now, lease_until)
        # A crashed run's rows are resolved before anything new is sent (invariant 1).
        if taken or resolution_only:
            return taken
        return _claim_validated(connection, batch_id, worker_id, limit, now, lease_until)


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
