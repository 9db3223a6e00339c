"""Registering a batch: one payout per new externalId, ALREADY_KNOWN or CONFLICT otherwise.

Rows go in chunks, each chunk one transaction with a bulk lookup of its externalIds and bulk
inserts, so a million rows never cost a million round trips. A chunk is idempotent by
(batch_id, row_number): running the same batch again, even after a crash half-way, only adds
the rows that are missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from sqlalchemy import ColumnElement, Connection, Engine, select, update

from payflow.ledger.db import REGISTER_LOCK_KEY, dialect_insert, take_lock
from payflow.ledger.records import (
    ConflictRow,
    Disposition,
    IntakeWarning,
    KnownRow,
    RegisterOutcome,
    RejectedRow,
)
from payflow.ledger.repeats import hold_repeats
from payflow.ledger.states import RowState
from payflow.ledger.tables import (
    INSTRUCTION_FIELDS,
    Batch,
    BatchRow,
    BatchWarning,
    LinkPayout,
    Payout,
    decimal_text,
)
from payflow.model import PayoutInstruction
from payflow.redact import mask_requisites
from payflow.schemas.recipients import canonical_requisites

CHUNK_ROWS = 20_000
T = TypeVar("T")
# The fields whose difference makes a CONFLICT, as named in the operator's reason.
_COMPARED = ("amount", "currency", "payment_type", "requisites", "bank_name", "service_id")
_COMPARED_PEOPLE = ("name", "user_id")


@dataclass(frozen=True, slots=True)
class _Known:
    content_hash: str
    state: RowState
    first_batch_id: str
    first_row: int
    # The compared fields, or the instruction to read them from (built only for a conflict).
    fields: dict[str, Any] | PayoutInstruction


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _fields(instruction: PayoutInstruction) -> dict[str, Any]:
    return {name: getattr(instruction, name) for name in _COMPARED + _COMPARED_PEOPLE}


def _differing(known: _Known, instruction: PayoutInstruction) -> list[str]:
    """The compared fields in which the row differs from the known payout; requisites compare
    in canonical form (`89351230001` is the payout sent to `79351230001`: invariant 11)."""
    theirs = _fields(instruction)
    before = known.fields if isinstance(known.fields, dict) else _fields(known.fields)
    differing: list[str] = []
    for name in _COMPARED + _COMPARED_PEOPLE:
        if name == "amount":
            if Decimal(theirs[name]) != Decimal(before[name]):
                differing.append(f"amount ({theirs[name]} here, {before[name]} before)")
        elif name == "requisites":
            kinds = (instruction.payment_type, str(before["payment_type"]))
            if canonical_requisites(kinds[0], theirs[name]) != canonical_requisites(
                kinds[1], str(before[name])
            ):
                differing.append(name)
        elif (theirs[name] or None) != (before[name] or None):
            # Names only: requisites and personal data never go into a reason (invariant 6).
            differing.append(name)
    return differing


def _conflict_reason(known: _Known, instruction: PayoutInstruction) -> str:
    what = ", ".join(_differing(known, instruction)) or "content"
    return (
        f"externalId {instruction.external_id!r} was registered by batch "
        f"{known.first_batch_id} (row {known.first_row}) with different {what}; not paid"
    )


# Amount goes last among the instruction's fields: it alone needs converting (to exact text).
_PLAIN_COLUMNS = tuple(name for name in INSTRUCTION_FIELDS if name != "amount")
PAYOUT_COLUMNS = (
    *_PLAIN_COLUMNS,
    "amount",
    "content_hash",
    "repeat_key",
    "user_key",
    "name_key",
    "batch_id",
    "state",
    "attempts",
    "corrected",
    "created_at",
    "updated_at",
)
WARNING_COLUMNS = ("batch_id", "row_number", "external_id", "column", "rule", "message")
# currency, amount, payment_type, name and requisites_masked are the row's own only when its
# payout is not (a rejected or conflicting row); a row with a payout of its own reads them from it.
BATCH_ROW_COLUMNS = (
    "batch_id",
    "row_number",
    "external_id",
    "disposition",
    "reasons",
    "currency",
    "amount",
    "payment_type",
    "name",
    "requisites_masked",
)
_NOT_OWN = (None, None, None, None, None)


def _payout_values(
    instruction: PayoutInstruction, digest: str, tail: tuple[Any, ...]
) -> tuple[Any, ...]:
    """One payouts row in PAYOUT_COLUMNS order; `tail` holds the values every row shares."""
    own = tuple(getattr(instruction, name) for name in _PLAIN_COLUMNS)
    keys = (instruction.repeat_key(), instruction.user_key(), instruction.name_key())
    return (*own, decimal_text(instruction.amount), digest, *keys, *tail)


def _lookup_known(connection: Connection, external_ids: list[str]) -> dict[str, _Known]:
    columns = [getattr(Payout, name) for name in _COMPARED + _COMPARED_PEOPLE]
    rows = connection.execute(
        select(
            Payout.external_id,
            Payout.content_hash,
            Payout.state,
            Payout.batch_id,
            Payout.row_number,
            *columns,
        ).where(Payout.external_id.in_(external_ids))
    )
    known: dict[str, _Known] = {}
    for row in rows:
        fields = dict(zip(_COMPARED + _COMPARED_PEOPLE, row[5:], strict=True))
        known[row.external_id] = _Known(
            row.content_hash, RowState(row.state), row.batch_id, row.row_number, fields
        )
    return known


def _lookup_links(connection: Connection, external_ids: list[str]) -> dict[str, tuple[str, int]]:
    """The links batch and row of each externalId that a payout link holds."""
    rows = connection.execute(
        select(LinkPayout.external_id, LinkPayout.batch_id, LinkPayout.row_number).where(
            LinkPayout.external_id.in_(external_ids)
        )
    )
    return {row.external_id: (row.batch_id, row.row_number) for row in rows}


def _with_legacy_ids(
    connection: Connection, chunk: Sequence[PayoutInstruction], legacy_ids: Mapping[str, str]
) -> Sequence[PayoutInstruction]:
    """The chunk, each derived id the ledger holds under its first derivation (requisites as
    written, identity.py) given that id: a row paid before canonical forms keeps its payout."""
    wanted = {legacy_ids[i.external_id] for i in chunk if i.external_id in legacy_ids}
    if not wanted:
        return chunk
    held = set(connection.scalars(select(Payout.external_id).where(Payout.external_id.in_(wanted))))
    if not held:
        return chunk
    return [
        i._replace(external_id=legacy_ids[i.external_id])
        if legacy_ids.get(i.external_id) in held
        else i
        for i in chunk
    ]


def _register_chunk(
    connection: Connection,
    batch_id: str,
    chunk: Sequence[PayoutInstruction],
    now: datetime,
    outcome: RegisterOutcome,
) -> int:
    external_ids = list({i.external_id for i in chunk})
    known = _lookup_known(connection, external_ids)
    links = _lookup_links(connection, external_ids)
    stamp = _db_value(connection, Payout.__table__.c.created_at, now)
    tail = (batch_id, RowState.VALIDATED.value, 0, False, stamp, stamp)
    payouts: list[tuple[Any, ...]] = []
    batch_rows: list[tuple[Any, ...]] = []
    for instruction in chunk:
        digest = instruction.content_hash()
        ext = instruction.external_id
        seen = known.get(ext)
        reasons = None
        own_cells: tuple[Any, ...] = _NOT_OWN
        link = links.get(ext) if seen is None else None
        if link is not None:
            # The recipient of a payout link creates this payout through the widget: paid here
            # too, the link would show them paid with someone else's payout.
            reason = (
                f"externalId {ext!r} belongs to a payout link of links batch {link[0]} "
                f"(row {link[1]}); not paid"
            )
            disposition = Disposition.CONFLICT
            reasons = json.dumps([reason], ensure_ascii=False)
            own_cells = _row_cells(instruction)
            outcome.conflicts.append(ConflictRow(instruction.row_number, ext, reason))
        elif seen is None:
            payouts.append(_payout_values(instruction, digest, tail))
            known[ext] = _Known(
                digest, RowState.VALIDATED, batch_id, instruction.row_number, instruction
            )
            disposition = Disposition.NEW
        elif seen.content_hash == digest or not _differing(seen, instruction):
            disposition = Disposition.ALREADY_KNOWN
            outcome.already_known.append(
                KnownRow(instruction.row_number, ext, seen.state, seen.first_batch_id)
            )
        else:
            reason = _conflict_reason(seen, instruction)
            disposition = Disposition.CONFLICT
            reasons = json.dumps([reason], ensure_ascii=False)
            own_cells = _row_cells(instruction)  # the known payout's may differ: not this row's
            outcome.conflicts.append(ConflictRow(instruction.row_number, ext, reason))
        batch_rows.append(
            (batch_id, instruction.row_number, ext, disposition.value, reasons, *own_cells)
        )
    bulk_insert(connection, "payouts", PAYOUT_COLUMNS, payouts)
    bulk_insert(connection, "batch_rows", BATCH_ROW_COLUMNS, batch_rows)
    return len(payouts)


def bulk_insert(
    connection: Connection, table: str, names: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    """INSERT rows of values ready for the driver (see `_db_value`) through its executemany.

    SQLAlchemy's executemany converts parameters value by value in Python, which was most of
    the time of a million-row batch; here the caller converts the few values that need it."""
    if not rows:
        return
    quote = connection.dialect.identifier_preparer.quote
    marker = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    sql = (
        # Table and column names are this module's constants, quoted; values are parameters.
        f"INSERT INTO {quote(table)} ({', '.join(quote(name) for name in names)}) "  # noqa: S608
        f"VALUES ({', '.join([marker] * len(names))})"
    )
    connection.exec_driver_sql(sql, rows)


def _db_value(connection: Connection, column: ColumnElement[Any], value: Any) -> Any:
    """`value` as the driver must receive it for `column` (e.g. a UTC time on SQLite)."""
    process = column.type.dialect_impl(connection.dialect).bind_processor(connection.dialect)
    return value if process is None else process(value)


class _Numbered(Protocol):
    @property
    def row_number(self) -> int: ...


N = TypeVar("N", bound=_Numbered)


def _not_registered(connection: Connection, batch_id: str, rows: Sequence[N]) -> list[N]:
    """The rows of a chunk this batch does not hold yet (checked under the register lock, so
    two runs registering one batch at once each add only what the other did not)."""
    present = set(
        connection.scalars(
            select(BatchRow.row_number).where(
                BatchRow.batch_id == batch_id,
                BatchRow.row_number.in_([row.row_number for row in rows]),
            )
        )
    )
    return [row for row in rows if row.row_number not in present]


def ensure_batch_row(
    connection: Connection,
    batch_id: str,
    source_name: str,
    valid: int,
    rejected: int,
    now: datetime,
    sheet: str | None,
) -> None:
    """Insert the batch's row of `batches` once, payouts, refunds and links alike, with the sheet
    read."""
    exists = connection.scalar(select(Batch.batch_id).where(Batch.batch_id == batch_id))
    if exists is not None and sheet is not None:
        # Registered before the ledger recorded sheets (0012): the same sheet again says which.
        connection.execute(
            update(Batch)
            .where(Batch.batch_id == batch_id, Batch.sheet.is_(None))
            .values(sheet=sheet)
        )
    if exists is None:
        # Two processes registering one file at once: the first row stands.
        values = {
            "batch_id": batch_id,
            "source_name": source_name,
            "sheet": sheet,
            "total_rows": valid + rejected,
            "valid_rows": valid,
            "rejected_rows": rejected,
            "created_at": now,
        }
        connection.execute(
            dialect_insert(connection, Batch.__table__).values(values).on_conflict_do_nothing()
        )


def _record_warnings(
    connection: Connection, batch_id: str, warnings: Sequence[IntakeWarning]
) -> None:
    """Keep the maker's warnings once: the same file again validates to the same warnings."""
    if not warnings or connection.scalar(
        select(BatchWarning.id).where(BatchWarning.batch_id == batch_id).limit(1)
    ):
        return
    rows = [(batch_id, w.row_number, w.external_id, w.column, w.rule, w.message) for w in warnings]
    bulk_insert(connection, "batch_warnings", WARNING_COLUMNS, rows)


def _row_cells(instruction: PayoutInstruction) -> tuple[Any, ...]:
    """A conflicting row's own currency, amount, paymentType, name and masked requisites, in
    BATCH_ROW_COLUMNS."""
    amount = decimal_text(instruction.amount)
    masked = mask_requisites(instruction.requisites) or None
    return (instruction.currency, amount, instruction.payment_type, instruction.name, masked)


def _rejected_values(batch_id: str, row: RejectedRow) -> tuple[Any, ...]:
    reasons = json.dumps(list(row.reasons), ensure_ascii=False)
    disposition = Disposition.REJECTED.value
    amount = None if row.amount is None else decimal_text(row.amount)
    cells = (row.currency, amount, row.payment_type, row.name, row.requisites_masked)
    return (batch_id, row.row_number, row.external_id, disposition, reasons, *cells)


def register_batch(
    engine: Engine,
    batch_id: str,
    source_name: str,
    valid: Sequence[PayoutInstruction],
    rejected: Sequence[RejectedRow],
    now: datetime,
    *,
    sheet: str | None = None,
    warnings: Sequence[IntakeWarning] = (),
    legacy_ids: Mapping[str, str] | None = None,
) -> RegisterOutcome:
    """Record every source row of a batch once, and the warnings validation gave its maker;
    see the module docstring. `legacy_ids`: derived ids' first derivation (_with_legacy_ids)."""
    numbers = [i.row_number for i in valid] + [r.row_number for r in rejected]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"batch {batch_id}: a row number appears more than once")
    with engine.begin() as connection:
        take_lock(connection, REGISTER_LOCK_KEY)
        ensure_batch_row(connection, batch_id, source_name, len(valid), len(rejected), now, sheet)
        _record_warnings(connection, batch_id, warnings)
    outcome = RegisterOutcome(batch_id=batch_id)
    new = added_rejects = 0
    for chunk in _chunks(valid, CHUNK_ROWS):
        with engine.begin() as connection:
            take_lock(connection, REGISTER_LOCK_KEY)
            todo = _with_legacy_ids(
                connection, _not_registered(connection, batch_id, chunk), legacy_ids or {}
            )
            if todo:
                new += _register_chunk(connection, batch_id, todo, now, outcome)
    for rejects in _chunks(rejected, CHUNK_ROWS):
        with engine.begin() as connection:
            take_lock(connection, REGISTER_LOCK_KEY)
            rows = [
                _rejected_values(batch_id, r)
                for r in _not_registered(connection, batch_id, rejects)
            ]
            bulk_insert(connection, "batch_rows", BATCH_ROW_COLUMNS, rows)
            added_rejects += len(rows)
    with engine.begin() as connection:
        # Every call, so a run that crashed between registering and holding still holds.
        take_lock(connection, REGISTER_LOCK_KEY)
        held = hold_repeats(connection, batch_id, now)
    added = new + len(outcome.already_known) + len(outcome.conflicts) + added_rejects
    return RegisterOutcome(
        batch_id=batch_id,
        new=new,
        rejected=added_rejects,
        already_registered=len(numbers) - added,
        already_known=outcome.already_known,
        conflicts=outcome.conflicts,
        held=held,
    )
