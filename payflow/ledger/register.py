"""Registering a batch: one payout per new externalId, ALREADY_KNOWN or CONFLICT otherwise.

Rows go in chunks, each chunk one transaction with a bulk lookup of its externalIds and bulk
inserts, so a million rows never cost a million round trips. A chunk is idempotent by
(batch_id, row_number): running the same batch again, even after a crash half-way, only adds
the rows that are missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, insert, select

from payflow.ledger.db import REGISTER_LOCK_KEY, take_lock
from payflow.ledger.records import (
    ConflictRow,
    Disposition,
    KnownRow,
    RegisterOutcome,
    RejectedRow,
)
from payflow.ledger.states import RowState
from payflow.ledger.tables import Batch, BatchRow, Payout
from payflow.model import PayoutInstruction

CHUNK_ROWS = 5_000
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
    fields: dict[str, Any]


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _fields(instruction: PayoutInstruction) -> dict[str, Any]:
    return {name: getattr(instruction, name) for name in _COMPARED + _COMPARED_PEOPLE}


def _conflict_reason(known: _Known, instruction: PayoutInstruction) -> str:
    theirs = _fields(instruction)
    differing: list[str] = []
    for name in _COMPARED + _COMPARED_PEOPLE:
        if name == "amount":
            if Decimal(theirs[name]) != Decimal(known.fields[name]):
                differing.append(f"amount ({theirs[name]} here, {known.fields[name]} before)")
        elif (theirs[name] or None) != (known.fields[name] or None):
            # Names only: requisites and personal data never go into a reason (invariant 6).
            differing.append(name)
    what = ", ".join(differing) or "content"
    return (
        f"externalId {instruction.external_id!r} was registered by batch "
        f"{known.first_batch_id} (row {known.first_row}) with different {what}; not paid"
    )


def _payout_values(
    batch_id: str, instruction: PayoutInstruction, digest: str, now: datetime
) -> dict[str, Any]:
    return {
        "external_id": instruction.external_id,
        "batch_id": batch_id,
        "row_number": instruction.row_number,
        "content_hash": digest,
        "amount": instruction.amount,
        "currency": instruction.currency,
        "payment_type": instruction.payment_type,
        "requisites": instruction.requisites,
        "name": instruction.name,
        "user_id": instruction.user_id,
        "service_id": instruction.service_id,
        "bank_name": instruction.bank_name,
        "note": instruction.note,
        "user_email": instruction.user_email,
        "user_phone": instruction.user_phone,
        "user_ip": instruction.user_ip,
        "callback_url": instruction.callback_url,
        "state": RowState.VALIDATED.value,
        "attempts": 0,
        "corrected": False,
        "created_at": now,
        "updated_at": now,
    }


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


def _register_chunk(
    connection: Connection,
    batch_id: str,
    chunk: Sequence[PayoutInstruction],
    now: datetime,
    outcome: RegisterOutcome,
) -> int:
    known = _lookup_known(connection, list({i.external_id for i in chunk}))
    payouts: list[dict[str, Any]] = []
    batch_rows: list[dict[str, Any]] = []
    for instruction in chunk:
        digest = instruction.content_hash()
        row: dict[str, Any] = {
            "batch_id": batch_id,
            "row_number": instruction.row_number,
            "external_id": instruction.external_id,
            "reasons": None,
        }
        seen = known.get(instruction.external_id)
        if seen is None:
            payouts.append(_payout_values(batch_id, instruction, digest, now))
            known[instruction.external_id] = _Known(
                digest, RowState.VALIDATED, batch_id, instruction.row_number, _fields(instruction)
            )
            row["disposition"] = Disposition.NEW.value
        elif seen.content_hash == digest:
            row["disposition"] = Disposition.ALREADY_KNOWN.value
            outcome.already_known.append(
                KnownRow(
                    instruction.row_number, instruction.external_id, seen.state, seen.first_batch_id
                )
            )
        else:
            reason = _conflict_reason(seen, instruction)
            row["disposition"] = Disposition.CONFLICT.value
            row["reasons"] = json.dumps([reason], ensure_ascii=False)
            outcome.conflicts.append(
                ConflictRow(instruction.row_number, instruction.external_id, reason)
            )
        batch_rows.append(row)
    if payouts:
        connection.execute(insert(Payout), payouts)
    connection.execute(insert(BatchRow), batch_rows)
    return len(payouts)


def _ensure_batch(
    engine: Engine, batch_id: str, source_name: str, valid: int, rejected: int, now: datetime
) -> set[int]:
    with engine.begin() as connection:
        take_lock(connection, REGISTER_LOCK_KEY)
        exists = connection.scalar(select(Batch.batch_id).where(Batch.batch_id == batch_id))
        if exists is None:
            connection.execute(
                insert(Batch).values(
                    batch_id=batch_id,
                    source_name=source_name,
                    total_rows=valid + rejected,
                    valid_rows=valid,
                    rejected_rows=rejected,
                    created_at=now,
                )
            )
            return set()
        return set(
            connection.scalars(select(BatchRow.row_number).where(BatchRow.batch_id == batch_id))
        )


def register_batch(
    engine: Engine,
    batch_id: str,
    source_name: str,
    valid: Sequence[PayoutInstruction],
    rejected: Sequence[RejectedRow],
    now: datetime,
) -> RegisterOutcome:
    """Record every source row of a batch once; see the module docstring."""
    numbers = [i.row_number for i in valid] + [r.row_number for r in rejected]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"batch {batch_id}: a row number appears more than once")
    done = _ensure_batch(engine, batch_id, source_name, len(valid), len(rejected), now)
    todo_valid = [i for i in valid if i.row_number not in done]
    todo_rejected = [r for r in rejected if r.row_number not in done]
    outcome = RegisterOutcome(batch_id=batch_id, already_registered=len(done))
    new = 0
    for chunk in _chunks(todo_valid, CHUNK_ROWS):
        with engine.begin() as connection:
            take_lock(connection, REGISTER_LOCK_KEY)
            new += _register_chunk(connection, batch_id, chunk, now, outcome)
    for rejects in _chunks(todo_rejected, CHUNK_ROWS):
        with engine.begin() as connection:
            connection.execute(
                insert(BatchRow),
                [
                    {
                        "batch_id": batch_id,
                        "row_number": r.row_number,
                        "external_id": r.external_id,
                        "disposition": Disposition.REJECTED.value,
                        "reasons": json.dumps(list(r.reasons), ensure_ascii=False),
                    }
                    for r in rejects
                ],
            )
    return RegisterOutcome(
        batch_id=batch_id,
        new=new,
        rejected=len(todo_rejected),
        already_registered=len(done),
        already_known=outcome.already_known,
        conflicts=outcome.conflicts,
    )
