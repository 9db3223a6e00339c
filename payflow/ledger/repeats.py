"""Repeats: a new row paying a person the same amount and currency as another batch's payout.

When a batch registers, its VALIDATED rows that pay the same amount and currency as another
batch's payout that is in flight, or COMPLETED within REPEAT_WINDOW, under another externalId,
to the same recipient (`repeat_key`: canonical requisites) or the same person whatever
the requisites (`user_key`: userId; `name_key`: name; model.person_key), move to HELD: a
corrected account re-uploaded is the classic double payment (design.md, invariant 11).
Nothing sends a HELD row; an operator's acknowledgement (`payflow run --allow-repeat`) is
recorded for the batch and moves them back to VALIDATED. Both are set-based SQL over the
`ix_payouts_repeat_key`, `ix_payouts_user_key` and `ix_payouts_name_key` indexes, never a
Python loop.

This is the one home of "the same person, amount and currency paid or in flight recently":
the approval warnings (`payflow.approvals`) list the rows held here (`repeat_rows`), so what a
row is held for and what an approver acknowledges are the same fact, fixed at registration.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Row,
    String,
    and_,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.orm import aliased

from payflow.ledger.claims import in_batch
from payflow.ledger.states import EventSource, RowState
from payflow.ledger.tables import Payout, RepeatAcknowledgement, StatusEvent, UTCDateTime
from payflow.schemas.recipients import canonical_requisites

REPEAT_WINDOW = timedelta(days=30)
IN_FLIGHT = (RowState.SUBMITTING, RowState.CREATED, RowState.PROCESSING)
# "Another payout", not "another externalId": a file without externalIds has none to name.
HOLD_MESSAGE = (
    "held: the same person (requisites, userId or name) was paid the same amount and currency "
    "by another payout, or it is in flight, within 30 days; run again with --allow-repeat to "
    "pay it"
)
RELEASE_MESSAGE = "repeat acknowledged by the operator (--allow-repeat)"


@dataclass(frozen=True, slots=True)
class HeldRow:
    """A row held back as a repeat, and the earlier payout it repeats."""

    row_number: int
    external_id: str
    earlier_external_id: str
    earlier_batch_id: str
    earlier_state: RowState
    still_held: bool = True  # False: an operator released it (`--allow-repeat`); it will pay
    # What differs from the earlier payout ("requisites …7006 -> …7016; userId"), "" if nothing.
    differs: str = ""


def _earlier(since: datetime) -> tuple[type[Payout], ColumnElement[bool]]:
    """An alias of payouts, and what makes one of its rows the earlier payout of a Payout row."""
    other = aliased(Payout, name="earlier")
    paid_recently = and_(other.state == RowState.COMPLETED.value, other.updated_at >= since)
    same_person = or_(
        other.repeat_key == Payout.repeat_key,
        other.user_key == Payout.user_key,
        other.name_key == Payout.name_key,
    )
    condition = and_(
        same_person,
        other.external_id != Payout.external_id,
        other.batch_id != Payout.batch_id,
        or_(other.state.in_([s.value for s in IN_FLIGHT]), paid_recently),
    )
    return other, condition


def is_acknowledged(connection: Connection, batch_id: str) -> bool:
    """True when an operator allowed this batch's repeats."""
    found = connection.scalar(
        select(RepeatAcknowledgement.batch_id).where(RepeatAcknowledgement.batch_id == batch_id)
    )
    return found is not None


def _move_all(
    connection: Connection,
    where: ColumnElement[bool],
    from_state: RowState,
    to_state: RowState,
    message: str,
    now: datetime,
) -> int:
    """Move every row matching `where` out of `from_state`, each with its status event."""
    chosen = and_(where, Payout.state == from_state.value)
    events = select(
        Payout.external_id,
        literal(from_state.value, String()),
        literal(to_state.value, String()),
        literal(EventSource.REVIEW.value, String()),
        literal(now, UTCDateTime()),
        literal(message, String()),
    ).where(chosen)
    # Events first: once the rows have moved, `chosen` no longer finds them.
    connection.execute(
        insert(StatusEvent).from_select(
            ["external_id", "from_state", "to_state", "source", "at", "status_message"], events
        )
    )
    moved = connection.execute(
        update(Payout)
        .where(chosen)
        .values(state=to_state.value, status_message=message, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(moved.rowcount)


def hold_repeats(connection: Connection, batch_id: str, now: datetime) -> int:
    """Hold the batch's own VALIDATED repeats (unless acknowledged); returns how many moved."""
    if is_acknowledged(connection, batch_id):
        return 0
    _, condition = _earlier(now - REPEAT_WINDOW)
    where = and_(Payout.batch_id == batch_id, exists().where(condition))
    return _move_all(connection, where, RowState.VALIDATED, RowState.HELD, HOLD_MESSAGE, now)


def acknowledge_repeats(engine: Engine, batch_id: str, now: datetime) -> int:
    """Record the operator's acknowledgement and release the batch's HELD rows to VALIDATED."""
    with engine.begin() as connection:
        if not is_acknowledged(connection, batch_id):
            connection.execute(
                insert(RepeatAcknowledgement).values(batch_id=batch_id, acknowledged_at=now)
            )
        return _move_all(
            connection, in_batch(batch_id), RowState.HELD, RowState.VALIDATED, RELEASE_MESSAGE, now
        )


def held_rows(engine: Engine, batch_id: str, now: datetime) -> list[HeldRow]:
    """The batch's rows HELD now, in row order, each with one earlier payout it repeats."""
    return [row for row in repeat_rows(engine, batch_id, now) if row.still_held]


def repeat_rows(engine: Engine, batch_id: str, now: datetime) -> list[HeldRow]:
    """Every row of the batch held as a repeat when it registered: still HELD, or released by
    an acknowledgement (its HELD event stays). Fixed at registration, so an approval that
    acknowledged them is never voided by other batches moving on."""
    other, condition = _earlier(now - REPEAT_WINDOW)
    ever_held = select(StatusEvent.external_id).where(StatusEvent.to_state == RowState.HELD.value)
    query = (
        select(
            Payout.row_number,
            Payout.external_id,
            Payout.state,
            other.external_id.label("earlier_external_id"),
            other.batch_id.label("earlier_batch_id"),
            other.state.label("earlier_state"),
            Payout.payment_type,
            Payout.requisites,
            Payout.user_id,
            Payout.name,
            other.payment_type.label("earlier_payment_type"),
            other.requisites.label("earlier_requisites"),
            other.user_id.label("earlier_user_id"),
            other.name.label("earlier_name"),
        )
        .join(other, and_(condition, other.created_at <= Payout.created_at), isouter=True)
        .where(
            Payout.batch_id == batch_id,
            or_(Payout.state == RowState.HELD.value, Payout.external_id.in_(ever_held)),
        )
        .order_by(Payout.row_number, other.id)
    )
    held: dict[str, HeldRow] = {}
    with engine.connect() as connection:
        for row in connection.execute(query):
            if row.external_id in held:
                continue
            held[row.external_id] = HeldRow(
                row.row_number,
                row.external_id,
                row.earlier_external_id or "",
                row.earlier_batch_id or "",
                RowState(row.earlier_state) if row.earlier_state else RowState.HELD,
                still_held=row.state == RowState.HELD.value,
                differs=_differences(row) if row.earlier_external_id else "",
            )
    return list(held.values())


def _tail(payment_type: str, requisites: str) -> str:
    # The last four characters of the canonical form only (design.md, invariant 6).
    return "…" + canonical_requisites(payment_type, requisites)[-4:]


def _differences(row: Row[Any]) -> str:
    """What a held row changed against the earlier payout it repeats, as an operator reads it."""
    found: list[str] = []
    before = canonical_requisites(row.earlier_payment_type, row.earlier_requisites)
    now = canonical_requisites(row.payment_type, row.requisites)
    if before != now:
        was, new = (
            _tail(row.earlier_payment_type, row.earlier_requisites),
            _tail(row.payment_type, row.requisites),
        )
        found.append(f"requisites {was} -> {new}" if was != new else "requisites")
    elif row.earlier_requisites.strip() != row.requisites.strip():
        found.append("requisites written another way (the same recipient)")
    if row.earlier_user_id.strip() != row.user_id.strip():
        found.append("userId")
    if " ".join(row.earlier_name.split()).casefold() != " ".join(row.name.split()).casefold():
        found.append("name")
    return "; ".join(found)


@dataclass(frozen=True, slots=True)
class AmendedRow:
    """A row that pays a recipient another row paid recently, with another amount."""

    row_number: int
    external_id: str
    amount: Decimal
    currency: str
    earlier_external_id: str
    earlier_batch_id: str
    earlier_amount: Decimal
    earlier_state: RowState


def amended_rows(engine: Engine, batch_id: str, now: datetime, prefix: str) -> list[AmendedRow]:
    """Rows of the batch whose externalId was derived (it starts with `prefix`) and whose
    recipient (requisites, currency, userId) a derived-id row of an earlier batch paid, or is
    paying, within REPEAT_WINDOW with another amount. A derived id follows the row's content,
    so a row whose amount was edited after it was paid is a new payout: this is the only trace
    of the edit (one per row, the earliest such payout)."""
    other = aliased(Payout, name="earlier")
    paid_recently = and_(
        other.state == RowState.COMPLETED.value, other.updated_at >= now - REPEAT_WINDOW
    )
    condition = and_(
        other.requisites == Payout.requisites,
        other.currency == Payout.currency,
        other.user_id == Payout.user_id,
        other.batch_id != Payout.batch_id,
        other.external_id.startswith(prefix, autoescape=True),
        other.created_at <= Payout.created_at,
        or_(other.state.in_([s.value for s in IN_FLIGHT]), paid_recently),
    )
    query = (
        select(
            Payout.row_number,
            Payout.external_id,
            Payout.amount,
            Payout.currency,
            other.external_id.label("earlier_external_id"),
            other.batch_id.label("earlier_batch_id"),
            other.amount.label("earlier_amount"),
            other.state.label("earlier_state"),
        )
        .join(other, condition)
        .where(
            Payout.batch_id == batch_id,
            Payout.external_id.startswith(prefix, autoescape=True),
        )
        .order_by(Payout.row_number, other.id)
    )
    found: dict[str, AmendedRow] = {}
    with engine.connect() as connection:
        for row in connection.execute(query):
            if row.external_id in found or row.amount == row.earlier_amount:
                continue  # the same amount is a repeat, held as such
            found[row.external_id] = AmendedRow(
                row.row_number,
                row.external_id,
                row.amount,
                row.currency,
                row.earlier_external_id,
                row.earlier_batch_id,
                row.earlier_amount,
                RowState(row.earlier_state),
            )
    return list(found.values())


@dataclass(frozen=True, slots=True)
class TwinRow:
    """A row paying the same recipient, amount and currency as an earlier row of its own file."""

    row_number: int
    external_id: str
    first_row_number: int
    first_external_id: str


def twin_rows(engine: Engine, batch_id: str) -> list[TwinRow]:
    """Rows of the batch whose `repeat_key` an earlier row of the same batch has (one per row,
    naming the first). Two such rows of one file were both paid with nobody asked, while the
    same pair across two batches is held. Fixed at registration: the states that leave it out
    (REJECTED, CONFLICT) are set then and never change."""
    # One pass over the batch's rows, sorted by key: the self-join this replaces compared every
    # row with every other on PostgreSQL before the table's first ANALYZE (a 4,000-row batch
    # took 6.4 s; 100,000 rows, hours), and one key on many rows gave their square in pairs.
    left_out = [RowState.REJECTED.value, RowState.CONFLICT.value]
    key, order = Payout.repeat_key, Payout.row_number
    rows = (
        select(
            Payout.row_number,
            Payout.external_id,
            func.first_value(Payout.row_number)
            .over(partition_by=key, order_by=order)
            .label("first_row_number"),
            func.first_value(Payout.external_id)
            .over(partition_by=key, order_by=order)
            .label("first_external_id"),
        )
        .where(
            Payout.batch_id == batch_id,
            Payout.state.not_in(left_out),
            Payout.repeat_key.is_not(None),
        )
        .subquery()
    )
    query = (
        select(rows)
        .where(rows.c.row_number > rows.c.first_row_number)
        .order_by(rows.c.row_number, rows.c.external_id)
    )
    with engine.connect() as connection:
        return [
            TwinRow(row.row_number, row.external_id, row.first_row_number, row.first_external_id)
            for row in connection.execute(query)
        ]
