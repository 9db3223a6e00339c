"""Every state change after a claim: submit outcomes, webhooks and polls, forward only.

Each move loads the row under a lock (PostgreSQL `FOR UPDATE`; SQLite's transaction is
IMMEDIATE), asks `states.check_move`, writes the row and appends one `status_events` line.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Row,
    Select,
    bindparam,
    false,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.exc import OperationalError

from payflow.ledger.claims import in_batch
from payflow.ledger.db import reader
from payflow.ledger.reading import due_for_poll, payout_ref
from payflow.ledger.records import LeaseLost, LedgerError, PayoutRef, UnknownPayout
from payflow.ledger.service_word import ServiceWord, WordSource, write_words
from payflow.ledger.states import (
    CORRECTIONS,
    POLLABLE_STATES,
    EventSource,
    IllegalTransition,
    Move,
    RowState,
    check_move,
    parse_api_status,
)
from payflow.ledger.tables import Payout, StatusEvent

# PostgreSQL's deadlock_detected and serialization_failure: the transaction was rolled back whole.
_ROLLED_BACK = frozenset({"40P01", "40001"})
DEADLOCK_ATTEMPTS = 4
P = ParamSpec("P")
T = TypeVar("T")


def retry_rolled_back(fn: Callable[P, T]) -> Callable[P, T]:
    """Run a multi-row transaction again when PostgreSQL aborted it as a deadlock: nothing of it
    was written, and the moves are forward only, so running it again is safe."""

    @wraps(fn)
    def again(*args: P.args, **kwargs: P.kwargs) -> T:
        for attempt in range(1, DEADLOCK_ATTEMPTS + 1):
            try:
                return fn(*args, **kwargs)
            except OperationalError as exc:
                if getattr(exc.orig, "sqlstate", None) not in _ROLLED_BACK:
                    raise
                if attempt == DEADLOCK_ATTEMPTS:
                    raise
                time.sleep(random.uniform(0.01, 0.1) * attempt)
        raise AssertionError("unreachable")

    return again


_ROW = (
    Payout.id,
    Payout.external_id,
    Payout.state,
    Payout.payout_id,
    Payout.claimed_by,
    Payout.next_poll_at,
    Payout.batch_id,
)


def lock_in_order(connection: Connection, where: ColumnElement[bool]) -> None:
    """Lock the payout rows a transaction is about to write, in externalId order.

    Every transaction that writes several payouts locks them in this one order (as
    `bulk.mark_created_many` does), so two never wait on each other in a cycle."""
    connection.execute(_in_order(select(Payout.id), where)).all()


def load_in_order(connection: Connection, where: ColumnElement[bool]) -> list[Row[Any]]:
    """`lock_in_order`, returning the locked rows with the columns a move reads."""
    return list(connection.execute(_in_order(select(*_ROW), where)))


def _in_order(query: Select[Any], where: ColumnElement[bool]) -> Select[Any]:
    return query.where(where).order_by(Payout.external_id).with_for_update()


def _these_payouts(updates: Sequence[StatusUpdate]) -> ColumnElement[bool]:
    external_ids = sorted({u.external_id for u in updates if u.external_id is not None})
    payout_ids = sorted({u.payout_id for u in updates if u.payout_id is not None})
    conditions = []
    if external_ids:
        conditions.append(Payout.external_id.in_(external_ids))
    if payout_ids:
        conditions.append(Payout.payout_id.in_(payout_ids))
    return or_(*conditions) if conditions else false()


def load_for_update(
    connection: Connection, *, external_id: str | None = None, payout_id: str | None = None
) -> Row[Any]:
    """The payout row by externalId (preferred) or payout id, locked; UnknownPayout if none."""
    query = select(*_ROW).with_for_update()
    if external_id is not None:
        query = query.where(Payout.external_id == external_id)
    elif payout_id is not None:
        query = query.where(Payout.payout_id == payout_id)
    else:
        raise ValueError("give an external_id or a payout_id")
    row = connection.execute(query).first()
    if row is None:
        raise UnknownPayout(f"no payout for externalId={external_id!r} payoutId={payout_id!r}")
    if payout_id is not None and row.payout_id not in (None, payout_id):
        # Two service payouts for one externalId would be a duplicate payment: stop loudly.
        raise LedgerError(
            f"externalId {row.external_id!r} has payout {row.payout_id}, not {payout_id}"
        )
    return row


@dataclass(frozen=True, slots=True)
class PlannedMove:
    """The writes of one allowed move: the payouts row's new values and its status event."""

    row_id: int
    from_state: str
    values: dict[str, Any]
    event: dict[str, Any]


def plan_move(
    row: Row[Any] | _Moved,
    new: RowState,
    *,
    source: EventSource,
    message: str | None,
    now: datetime,
    at: datetime | None = None,
    payout_id: str | None = None,
) -> PlannedMove:
    """What an allowed move of `row` to `new` writes; the caller checked the move."""
    current = RowState(row.state)
    values: dict[str, Any] = {"state": new.value, "status_message": message, "updated_at": now}
    if current == RowState.SUBMITTING:
        values.update(claimed_by=None, lease_until=None)
    if new in POLLABLE_STATES:
        values["next_poll_at"] = row.next_poll_at or now
    else:
        values["next_poll_at"] = None
    if source in (EventSource.WEBHOOK, EventSource.POLL) or payout_id is not None:
        values["last_status_at"] = at or now
    if payout_id is not None and row.payout_id is None:
        values["payout_id"] = payout_id
    if (current, new) in CORRECTIONS:
        values["corrected"] = True
    event = {
        "external_id": row.external_id,
        "from_state": current.value,
        "to_state": new.value,
        "source": source.value,
        "at": at or now,
        "status_message": message,
    }
    return PlannedMove(row.id, current.value, values, event)


def write_moves(connection: Connection, moves: Sequence[PlannedMove]) -> None:
    """Write planned moves with one statement per shape of update and one for all events."""
    shapes: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for move in moves:
        params = {"_row_id": move.row_id, "_from_state": move.from_state, **move.values}
        shapes[tuple(sorted(move.values))].append(params)
    guarded = update(Payout).where(
        Payout.id == bindparam("_row_id"), Payout.state == bindparam("_from_state")
    )
    for batch in shapes.values():
        # executemany: the SET clause comes from the parameter names.
        connection.execute(guarded, batch)
    if moves:
        connection.execute(insert(StatusEvent), [move.event for move in moves])


def apply_move(
    connection: Connection,
    row: Row[Any],
    new: RowState,
    *,
    source: EventSource,
    message: str | None,
    now: datetime,
    at: datetime | None = None,
    payout_id: str | None = None,
) -> None:
    """Write an allowed move of `row` to `new`, with its event; the caller checked the move."""
    write_moves(
        connection,
        [plan_move(row, new, source=source, message=message, now=now, at=at, payout_id=payout_id)],
    )


def _was_ever(connection: Connection, external_id: str, state: RowState) -> bool:
    found = connection.scalar(
        select(StatusEvent.id)
        .where(StatusEvent.external_id == external_id, StatusEvent.to_state == state.value)
        .limit(1)
    )
    return found is not None


def _set_payout_id(connection: Connection, row: Row[Any], payout_id: str, now: datetime) -> None:
    if row.payout_id is None:
        connection.execute(
            update(Payout).where(Payout.id == row.id).values(payout_id=payout_id, updated_at=now)
        )


def mark_submit_outcome(
    engine: Engine,
    external_id: str,
    new: RowState,
    *,
    message: str | None,
    worker_id: str | None,
    source: EventSource,
    now: datetime,
) -> bool:
    """Move a SUBMITTING row held by `worker_id` to VALIDATED / SUBMIT_REJECTED / CONFLICT."""
    with engine.begin() as connection:
        row = load_for_update(connection, external_id=external_id)
        current = RowState(row.state)
        if check_move(external_id, current, new) is Move.STALE:
            return False
        if worker_id is not None and row.claimed_by != worker_id:
            raise LeaseLost(f"{external_id!r} is leased to {row.claimed_by}, not {worker_id}")
        apply_move(connection, row, new, source=source, message=message, now=now)
        return True


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """One status the service reported (webhook or poll), to be recorded forward only."""

    status: str
    message: str | None
    source: EventSource
    external_id: str | None = None
    payout_id: str | None = None
    at: datetime | None = None
    amount: Decimal | None = None
    currency: str | None = None


def _word(row: Row[Any], change: StatusUpdate, state: RowState, now: datetime) -> ServiceWord:
    """The service's word an update carries, for the payout `row`."""
    return ServiceWord(
        external_id=row.external_id,
        batch_id=row.batch_id,
        found=True,
        payout_id=change.payout_id or row.payout_id,
        status=state.value,
        status_message=change.message,
        amount=change.amount,
        currency=change.currency,
        at=change.at or now,
        source=WordSource(change.source.value),
    )


def _is_word(change: StatusUpdate, moved: bool) -> bool:
    """Whether an update is the service's latest word: a poll (a GET) always is; a webhook
    when it moved the row (a late one, behind the ledger, is old news)."""
    return moved or change.source is EventSource.POLL


def record_status(engine: Engine, change: StatusUpdate, *, now: datetime) -> bool:
    """Record a status from a webhook or a poll, forward only; see Ledger.record_status."""
    try:
        with engine.begin() as connection:
            return _record_in(connection, change, now)
    except _Surprise as surprise:
        # The ledger cannot follow (COMPLETED -> CANCELED, FAILED -> COMPLETED): the service's
        # word is kept all the same, and the readers' outcome follows it.
        with engine.begin() as connection:
            write_words(connection, [surprise.word])
        raise surprise.error from None


class _Surprise(Exception):
    """An illegal move that is not old news, with the service's word it carried."""

    def __init__(self, error: IllegalTransition, word: ServiceWord) -> None:
        super().__init__(str(error))
        self.error = error
        self.word = word


@retry_rolled_back
def record_statuses(
    engine: Engine, updates: Sequence[StatusUpdate], *, now: datetime
) -> list[bool | LedgerError | IllegalTransition]:
    """`record_status` for many updates, in order, in one transaction (one commit, one fsync).

    An update that raises is rolled back alone and its error returned in its place: the group is
    then written again with a savepoint per update. Later updates of a payout see earlier ones."""
    try:
        # The usual group has no update that raises: all in one transaction, no savepoints.
        with engine.begin() as connection:
            rows = load_in_order(connection, _these_payouts(updates))
            plain = _plan_plain_moves(rows, updates, now)
            if plain is not None:
                moved, rounds, words = plain
                for moves in rounds:
                    write_moves(connection, moves)
                write_words(connection, words)
                return list(moved)
            return [_record_in(connection, change, now) for change in updates]
    except (LedgerError, IllegalTransition, _Surprise):
        pass  # rolled back whole; again, each update in a savepoint of its own
    results: list[bool | LedgerError | IllegalTransition] = []
    with engine.begin() as connection:
        lock_in_order(connection, _these_payouts(updates))
        for change in updates:
            try:
                with connection.begin_nested():
                    results.append(_record_in(connection, change, now))
            except _Surprise as surprise:
                write_words(connection, [surprise.word])  # outside the rolled-back savepoint
                results.append(surprise.error)
            except (LedgerError, IllegalTransition) as exc:
                results.append(exc)
    return results


def _plan_plain_moves(
    rows: Sequence[Row[Any]], updates: Sequence[StatusUpdate], now: datetime
) -> tuple[list[bool], list[list[PlannedMove]], list[ServiceWord]] | None:
    """The group's writes when every update is a plain one, else None (nothing written yet).

    Plain: its payout is among `rows` with no other payout id, its status is known, and the
    move is allowed or stale. A payout id the ledger does not hold yet (a webhook that came
    before the answer to its POST) is stored by the move. The decisions are `_record_in`'s,
    made without a query per update, so a group of webhooks costs a few statements instead of
    three per update. The k-th move of a payout goes into the k-th round, so rounds written in
    order keep each payout's order."""
    by_external = {row.external_id: row for row in rows}
    by_payout_id = {row.payout_id: row for row in rows if row.payout_id is not None}
    current: dict[int, Row[Any] | _Moved] = {}
    moved: list[bool] = []
    rounds: list[list[PlannedMove]] = []
    moves_of: dict[int, int] = defaultdict(int)
    words: list[ServiceWord] = []
    for change in updates:
        if change.external_id is not None:
            found = by_external.get(change.external_id)
        else:
            found = by_payout_id.get(change.payout_id) if change.payout_id is not None else None
        if found is None:
            return None  # UnknownPayout: the careful path raises it for this update alone
        row = current.get(found.id, found)
        if change.payout_id is not None and row.payout_id != change.payout_id:
            if row.payout_id is not None:
                return None  # another payout id: a LedgerError
            if by_payout_id.get(change.payout_id, found).id != found.id:
                return None  # an id another payout holds: the careful path says what it is
        state = parse_api_status(change.status)
        if state is None:
            return None  # kept as the message by the careful path
        try:
            move = check_move(row.external_id, RowState(row.state), state)
        except IllegalTransition:
            return None  # maybe old news after a correction: the careful path looks it up
        if move is Move.STALE:
            if change.payout_id is not None and row.payout_id is None:
                return None  # a payout id to store with no move: the careful path stores it
            moved.append(False)
            if _is_word(change, False):
                words.append(_word(found, change, state, now))
            continue
        words.append(_word(found, change, state, now))
        planned = plan_move(
            row,
            state,
            source=change.source,
            message=change.message,
            now=now,
            at=change.at,
            payout_id=change.payout_id,
        )
        current[found.id] = _Moved.after(row, planned)
        if change.payout_id is not None:
            by_payout_id[change.payout_id] = found  # stored by this move, if it was not yet
        turn = moves_of[found.id]
        moves_of[found.id] += 1
        if turn == len(rounds):
            rounds.append([])
        rounds[turn].append(planned)
        moved.append(True)
    return moved, rounds, words


@dataclass(frozen=True, slots=True)
class _Moved:
    """A payout row as a planned move leaves it, for the next update of the same payout."""

    id: int
    external_id: str
    state: str
    payout_id: str | None
    next_poll_at: datetime | None

    @classmethod
    def after(cls, row: Row[Any] | _Moved, planned: PlannedMove) -> _Moved:
        values = planned.values
        return cls(
            row.id,
            row.external_id,
            values["state"],
            values.get("payout_id", row.payout_id),
            values["next_poll_at"],
        )


def _record_in(connection: Connection, change: StatusUpdate, now: datetime) -> bool:
    row = load_for_update(connection, external_id=change.external_id, payout_id=change.payout_id)
    at = change.at
    if change.payout_id is not None:
        _set_payout_id(connection, row, change.payout_id, now)
    state = parse_api_status(change.status)
    if state is None:
        note = f"unrecognised status {change.status!r}" + (
            f": {change.message}" if change.message else ""
        )
        connection.execute(
            update(Payout)
            .where(Payout.id == row.id)
            .values(status_message=note, updated_at=now, last_status_at=at or now)
        )
        return False
    current = RowState(row.state)
    word = _word(row, change, state, now)
    try:
        move = check_move(row.external_id, current, state)
    except IllegalTransition as exc:
        # A redelivered webhook for a status the payout already passed through (before a
        # correction moved it on) is old news, not a surprise.
        if _was_ever(connection, row.external_id, state):
            if _is_word(change, False):
                write_words(connection, [word])
            return False
        raise _Surprise(exc, word) from None
    if move is Move.STALE:
        if _is_word(change, False):
            write_words(connection, [word])
        return False
    write_words(connection, [word])
    apply_move(
        connection,
        row,
        state,
        source=change.source,
        message=change.message,
        now=now,
        at=at,
        payout_id=change.payout_id,
    )
    return True


def schedule_poll(engine: Engine, external_id: str, next_poll_at: datetime) -> None:
    """Set when a non-final payout is next polled (final ones are never polled)."""
    pollable = [state.value for state in POLLABLE_STATES]
    with engine.begin() as connection:
        connection.execute(
            update(Payout)
            .where(Payout.external_id == external_id, Payout.state.in_(pollable))
            .values(next_poll_at=next_poll_at)
        )


@retry_rolled_back
def schedule_polls(engine: Engine, schedule: Sequence[tuple[str, datetime]]) -> None:
    """`schedule_poll` for many payouts in one transaction (one statement, executemany)."""
    if not schedule:
        return
    # executemany cannot expand an IN list: spell it as ORs.
    pollable = or_(*(Payout.state == state.value for state in POLLABLE_STATES))
    statement = (
        update(Payout)
        .where(Payout.external_id == bindparam("_external_id"), pollable)
        .values(next_poll_at=bindparam("_next_poll_at"))
    )
    params = [{"_external_id": ext, "_next_poll_at": at} for ext, at in schedule]
    with engine.begin() as connection:
        lock_in_order(connection, Payout.external_id.in_(sorted({ext for ext, _ in schedule})))
        connection.execute(statement, params)


@retry_rolled_back
def make_polls_due(engine: Engine, batch_id: str, at: datetime) -> int:
    """Make every non-final payout of the batch due for a poll at `at`; returns how many."""
    pollable = [state.value for state in POLLABLE_STATES]
    with engine.begin() as connection:
        lock_in_order(connection, in_batch(batch_id) & Payout.state.in_(pollable))
        result = connection.execute(
            update(Payout)
            .where(in_batch(batch_id), Payout.state.in_(pollable))
            .values(next_poll_at=at)
            .execution_options(synchronize_session=False)
        )
    return int(result.rowcount)


@retry_rolled_back
def take_polls_due(
    engine: Engine, batch_id: str, now: datetime, limit: int, until: datetime
) -> list[PayoutRef]:
    """The payouts `payouts_to_poll` gives, each made due only at `until` in the same
    transaction: another tracker of the batch (a second pay run) takes the next ones instead of
    polling these too. Rows another transaction holds are skipped (PostgreSQL `SKIP LOCKED`;
    SQLite's IMMEDIATE transactions take turns), so a take never waits and never deadlocks.
    The taker writes each payout's real next poll when it records the poll (`schedule_polls`);
    `until` only matters if it dies first."""
    # Most ticks find nothing due (webhooks bring the news): those read, and take no write
    # lock (on SQLite the whole file's, which the receiver and the submit lanes wait for).
    with reader(engine).connect() as connection:
        if connection.execute(due_for_poll(batch_id, now, 1)).first() is None:
            return []
    with engine.begin() as connection:
        query = due_for_poll(batch_id, now, limit).with_for_update(skip_locked=True)
        refs = [payout_ref(row) for row in connection.execute(query)]
        if refs:
            connection.execute(
                update(Payout)
                .where(Payout.external_id.in_([ref.external_id for ref in refs]))
                .values(next_poll_at=until)
            )
    return refs
