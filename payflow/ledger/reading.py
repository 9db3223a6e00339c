"""Read-only queries: what to poll, what is unfinished, and the per-row view for reports."""

from __future__ import annotations

import json
from collections import namedtuple
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Engine, Row, Select, case, exists, func, or_, select

from payflow.ledger.claims import in_batch
from payflow.ledger.records import (
    BatchHeader,
    Disposition,
    IntakeWarning,
    PayoutRef,
    RowView,
    StatusEventView,
)
from payflow.ledger.states import (
    FINAL_STATUSES,
    POLLABLE_STATES,
    UNFINISHED_STATES,
    EventSource,
    RowState,
)
from payflow.ledger.tables import (
    Batch,
    BatchRow,
    BatchWarning,
    LinkPayout,
    LinkReject,
    Payout,
    StatusEvent,
)

PAGE_ROWS = 2_000
T = TypeVar("T")
_REF = (
    Payout.external_id,
    Payout.payout_id,
    Payout.state,
    Payout.last_status_at,
    Payout.next_poll_at,
)


def payout_ref(row: Row[Any]) -> PayoutRef:
    """A row read with the columns of `due_for_poll` (or `unfinished`) as a PayoutRef."""
    return PayoutRef(
        row.external_id, row.payout_id, RowState(row.state), row.last_status_at, row.next_poll_at
    )


def due_for_poll(batch_id: str, now: datetime, limit: int) -> Select[Any]:
    """Non-final payouts of the batch with a payout id whose next poll is due, oldest first."""
    return (
        select(*_REF)
        .where(
            in_batch(batch_id),
            Payout.state.in_([s.value for s in POLLABLE_STATES]),
            Payout.payout_id.is_not(None),
            Payout.next_poll_at <= now,
        )
        .order_by(Payout.next_poll_at)
        .limit(limit)
    )


def payouts_to_poll(engine: Engine, batch_id: str, now: datetime, limit: int) -> list[PayoutRef]:
    """Non-final payouts of the batch with a payout id whose next poll is due."""
    with engine.connect() as connection:
        return [payout_ref(row) for row in connection.execute(due_for_poll(batch_id, now, limit))]


def last_webhook_move(engine: Engine, batch_id: str, since: datetime) -> datetime | None:
    """When a webhook last moved a payout of the batch, looking back no further than `since`."""
    query = (
        select(func.max(StatusEvent.at))
        .join(Payout, Payout.external_id == StatusEvent.external_id)
        .where(
            StatusEvent.source == EventSource.WEBHOOK.value,
            StatusEvent.at >= since,
            in_batch(batch_id),
        )
    )
    with engine.connect() as connection:
        latest: datetime | None = connection.scalar(query)
    return latest


def unfinished(engine: Engine, batch_id: str) -> list[PayoutRef]:
    """Payouts of the batch not yet final: VALIDATED, SUBMITTING, CREATED or PROCESSING."""
    query = select(*_REF).where(
        in_batch(batch_id), Payout.state.in_([s.value for s in UNFINISHED_STATES])
    )
    with engine.connect() as connection:
        return [payout_ref(row) for row in connection.execute(query)]


def has_unfinished(engine: Engine, batch_id: str) -> bool:
    """Whether a payout of the batch is not final yet (`unfinished` without reading them)."""
    query = select(
        exists().where(in_batch(batch_id), Payout.state.in_([s.value for s in UNFINISHED_STATES]))
    )
    with engine.connect() as connection:
        return bool(connection.scalar(query))


def final_since(engine: Engine, batch_id: str, since: datetime) -> list[PayoutRef]:
    """Final payouts of the batch whose last news came at or after `since`: inside the
    correction window, where the platform may still move them."""
    last = func.coalesce(Payout.last_status_at, Payout.updated_at)
    query = select(*_REF).where(
        in_batch(batch_id),
        Payout.state.in_([s.value for s in FINAL_STATUSES]),
        last >= since,
    )
    with engine.connect() as connection:
        return [payout_ref(row) for row in connection.execute(query)]


def lease_holders(engine: Engine, batch_id: str) -> set[str]:
    """Worker ids holding SUBMITTING rows of the batch, expired leases included."""
    query = (
        select(Payout.claimed_by)
        .where(
            in_batch(batch_id),
            Payout.state == RowState.SUBMITTING.value,
            Payout.claimed_by.is_not(None),
        )
        .distinct()
    )
    with engine.connect() as connection:
        return {str(holder) for holder in connection.scalars(query)}


def _row_state() -> ColumnElement[Any]:
    return case(
        (BatchRow.disposition == Disposition.REJECTED.value, RowState.REJECTED.value),
        (BatchRow.disposition == Disposition.CONFLICT.value, RowState.CONFLICT.value),
        else_=Payout.state,
    )


def _counted_by_state(batch_id: str, *where: ColumnElement[bool]) -> Select[Any]:
    """(state, rows) of the batch's source rows matching `where`, by the state `batch_rows`
    reads (REJECTED and CONFLICT rows count as such)."""
    state = _row_state()
    return (
        select(state, func.count())
        .select_from(BatchRow)
        .outerjoin(Payout, Payout.external_id == BatchRow.external_id)
        .where(BatchRow.batch_id == batch_id, *where)
        .group_by(state)
    )


def batch_summary(engine: Engine, batch_id: str) -> dict[str, int]:
    """Rows of the batch per state; REJECTED and CONFLICT rows count as such."""
    with engine.connect() as connection:
        rows = connection.execute(_counted_by_state(batch_id))
        return {str(name): int(count) for name, count in rows}


def rows_in_states(
    engine: Engine, batch_id: str, states: frozenset[RowState]
) -> list[tuple[int, str | None, RowState]]:
    """(row, externalId, state) of the batch's source rows in `states`, in row order: the
    states `batch_rows` reads, without reading every row of a large batch to find a few."""
    state = _row_state()
    query = (
        select(BatchRow.row_number, BatchRow.external_id, state)
        .select_from(BatchRow)
        .outerjoin(Payout, Payout.external_id == BatchRow.external_id)
        .where(BatchRow.batch_id == batch_id, state.in_([s.value for s in states]))
        .order_by(BatchRow.row_number)
    )
    with engine.connect() as connection:
        return [(int(n), ext, RowState(name)) for n, ext, name in connection.execute(query)]


def states_of(engine: Engine, batch_id: str, disposition: Disposition) -> dict[RowState, int]:
    """Rows of the batch with `disposition`, counted by the state `batch_rows` reads."""
    query = _counted_by_state(batch_id, BatchRow.disposition == disposition.value)
    with engine.connect() as connection:
        return {RowState(name): int(count) for name, count in connection.execute(query)}


def _view(row: Any) -> RowView:
    disposition = Disposition(row.disposition)
    paid = disposition in (Disposition.NEW, Disposition.ALREADY_KNOWN)
    if disposition is Disposition.REJECTED:
        state = RowState.REJECTED
    elif disposition is Disposition.CONFLICT:
        state = RowState.CONFLICT
    else:
        state = RowState(row.state)
    return RowView(
        row_number=row.row_number,
        external_id=row.external_id,
        disposition=disposition,
        state=state,
        first_batch_id=row.first_batch_id,
        payout_id=row.payout_id if paid else None,
        status_message=row.status_message if paid else None,
        amount=row.amount if paid else None,
        currency=row.currency if paid else None,
        payment_type=row.payment_type if paid else None,
        requisites=row.requisites if paid else None,
        corrected=bool(row.corrected) if paid else False,
        attempts=row.attempts if paid else 0,
        reasons=json.loads(row.reasons) if row.reasons else [],
    )


def batch_rows(engine: Engine, batch_id: str) -> Iterator[RowView]:
    """Every source row of the batch in row order, a page per short read (safe to stop early)."""
    base = (
        select(
            BatchRow.row_number,
            BatchRow.external_id,
            BatchRow.disposition,
            BatchRow.reasons,
            Payout.batch_id.label("first_batch_id"),
            Payout.state,
            Payout.payout_id,
            Payout.status_message,
            Payout.amount,
            Payout.currency,
            Payout.payment_type,
            Payout.requisites,
            Payout.corrected,
            Payout.attempts,
        )
        .select_from(BatchRow)
        .outerjoin(Payout, Payout.external_id == BatchRow.external_id)
        .where(BatchRow.batch_id == batch_id)
        .order_by(BatchRow.row_number)
        .limit(PAGE_ROWS)
    )
    return by_row_number(engine, base, _view, PAGE_ROWS)


def by_row_number(
    engine: Engine, base: Select[Any], convert: Callable[[Any], T], page_rows: int
) -> Iterator[T]:
    """Stream `base` (ordered by BatchRow.row_number, limited to `page_rows`) page by page:
    each page is one short read keyed on the last row number, so a caller may stop early.
    `convert` gets each row as a named tuple of the select's columns: a SQLAlchemy Row's
    attribute costs about 0.5 us, and a report reads some 27 of every row (1-2 s of CPU a
    100,000-row report)."""
    after: int | None = None
    while True:
        query = base if after is None else base.where(BatchRow.row_number > after)
        with engine.connect() as connection:
            result = connection.execute(query)
            plain: Any = namedtuple("Columns", result.keys())  # type: ignore[misc]
            rows: list[Any] = [plain._make(row) for row in result]
        yield from (convert(row) for row in rows)
        if len(rows) < page_rows:
            return
        after = int(rows[-1].row_number)


HEADER_COLUMNS = (Batch.batch_id, Batch.source_name, Batch.created_at, Batch.made_by, Batch.sheet)


def not_links() -> ColumnElement[bool]:
    """Batches other than links batches (registered in `batches` for their approvals only:
    their rows are claims, listed apart)."""
    return ~or_(
        exists().where(LinkPayout.batch_id == Batch.batch_id),
        exists().where(LinkReject.batch_id == Batch.batch_id),
    )


def newest_batches(engine: Engine, limit: int, offset: int = 0) -> list[BatchHeader]:
    """Registered payout and refund batches, newest first: `limit` of them after the first
    `offset`."""
    query = (
        select(*HEADER_COLUMNS)
        .where(not_links())
        .order_by(Batch.created_at.desc(), Batch.batch_id.desc())
        .offset(offset)
        .limit(limit)
    )
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [BatchHeader(*row) for row in rows]


def batch_header(engine: Engine, batch_id: str) -> BatchHeader | None:
    """One registered batch's header; None when there is no such batch."""
    with engine.connect() as connection:
        row = connection.execute(select(*HEADER_COLUMNS).where(Batch.batch_id == batch_id)).first()
    return BatchHeader(*row) if row is not None else None


def batch_count(engine: Engine) -> int:
    """How many payout and refund batches the ledger holds."""
    with engine.connect() as connection:
        query = select(func.count()).select_from(Batch).where(not_links())
        return int(connection.execute(query).scalar_one())


def batch_exists(engine: Engine, batch_id: str) -> bool:
    """True when the batch was registered (even if only in part)."""
    with engine.connect() as connection:
        found = connection.scalar(select(Batch.batch_id).where(Batch.batch_id == batch_id))
    return found is not None


def status_events(engine: Engine, external_id: str) -> list[StatusEventView]:
    """The payout's history, oldest first."""
    query = (
        select(*StatusEvent.__table__.c)
        .where(StatusEvent.external_id == external_id)
        .order_by(StatusEvent.id)
    )
    with engine.connect() as connection:
        return [
            StatusEventView(
                external_id=row.external_id,
                from_state=RowState(row.from_state) if row.from_state else None,
                to_state=RowState(row.to_state),
                source=row.source,
                at=row.at,
                status_message=row.status_message,
            )
            for row in connection.execute(query)
        ]


def last_change(engine: Engine, batch_id: str) -> datetime | None:
    """When a row of the batch last changed in the ledger (None: no such batch)."""
    changed = select(func.max(Payout.updated_at)).where(in_batch(batch_id))
    registered = select(Batch.created_at).where(Batch.batch_id == batch_id)
    with engine.connect() as connection:
        latest = connection.scalar(changed)
        created = connection.scalar(registered)
    moments = [moment for moment in (latest, created) if moment is not None]
    return max(moments) if moments else None


def intake_warnings(engine: Engine, batch_id: str) -> list[IntakeWarning]:
    """The warnings validation gave the batch's maker, as they read then, by row; only of rows
    the batch may send: an approver was warned of an outlier on a CONFLICT row, never sent."""
    query = (
        select(
            BatchWarning.row_number,
            BatchWarning.external_id,
            BatchWarning.column,
            BatchWarning.rule,
            BatchWarning.message,
        )
        .outerjoin(
            BatchRow,
            (BatchRow.batch_id == BatchWarning.batch_id)
            & (BatchRow.row_number == BatchWarning.row_number),
        )
        .where(
            BatchWarning.batch_id == batch_id,
            # A warning about the file as a whole (row 1, its header) has no row of its own.
            (BatchRow.disposition == Disposition.NEW.value) | BatchRow.row_number.is_(None),
        )
        .order_by(BatchWarning.row_number, BatchWarning.id)
    )
    with engine.connect() as connection:
        return [IntakeWarning(*row) for row in connection.execute(query)]
