"""Validating a read batch: the pandera rules, the lookups, the warnings, and the instructions."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal, InvalidOperation
from functools import partial
from itertools import repeat
from typing import TypeVar

import numpy as np
import pandas as pd

from payflow.intake import Problem, RawBatch, ValidationReport
from payflow.intake.identity import derived_external_ids, legacy_external_ids
from payflow.intake.lookups import BanksForPhones, ServiceInfo
from payflow.intake.problems import FILE_ROW, RejectedCells, not_read
from payflow.model import PayoutInstruction
from payflow.redact import mask_rejected, printable
from payflow.schemas.batch_schema import find_problems
from payflow.schemas.batch_warnings import find_warnings
from payflow.schemas.iso4217 import ISO_4217_CODES
from payflow.schemas.lookups import check_enabled_pairs, check_services, resolve_sbp_banks
from payflow.schemas.rules import RulesTable, load_rules
from payflow.schemas.text_checks import cells

T = TypeVar("T")

# _instructions passes PayoutInstruction's fields by position, so their order is pinned here.
_FIELD_ORDER = (
    "row_number", "external_id", "amount", "currency", "payment_type", "requisites", "name",
    "user_id", "service_id", "bank_name", "note", "user_email", "user_phone", "user_ip",
    "callback_url",
)  # fmt: skip
if PayoutInstruction._fields != _FIELD_ORDER:
    raise RuntimeError("PayoutInstruction's fields changed: update payflow.schemas.validation")


def validate_rows(
    raw: RawBatch,
    *,
    services: Sequence[ServiceInfo] | None,
    banks_for_phones: BanksForPhones | None,
    strict: bool = False,
    table: RulesTable | None = None,
) -> ValidationReport:
    """Every reject and warning of the batch, and an instruction for each row that may be paid."""
    table = table or load_rules()
    frame, notices, legacy_ids = _with_external_ids(raw)
    prepared, rejects = find_problems(frame, table)
    ids = frame["externalId"]
    rejects = not_read(rejects, raw.read_problems) + [_with_id(p, ids) for p in raw.read_problems]
    # Each look-up judges every row whose cells it reads broke no rule, whatever else the row
    # broke: a row rejected for its amount is still checked for its serviceId and bank, so the
    # operator learns every problem at once. A look-up over a cell already rejected would only
    # restate that problem (a malformed phone has no banks list), so such a row waits for it.
    pair_rows = _clean(frame.index, rejects, ("paymentType", "currency"))
    service_rejects, not_checked = check_services(
        frame, _clean(frame.index, rejects, ("serviceId",)), services, pair_rows=pair_rows
    )
    pair_rejects, pairs_not_checked = check_enabled_pairs(frame, pair_rows, services)
    bank_rows = _clean(frame.index, rejects, ("paymentType", "requisites", "bankName"))
    banks = resolve_sbp_banks(frame, bank_rows, banks_for_phones)
    rejects += service_rejects + pair_rejects + banks.problems
    not_checked += pairs_not_checked
    valid_rows = _without(frame.index, rejects)
    # A rejected row's bank was resolved too, but only the rows paid take their bank id.
    bank_ids = {row: bank for row, bank in banks.ids.items() if row in valid_rows}
    unchecked = _unchecked(valid_rows, banks.unchecked, services is None)
    warnings = find_warnings(_rows(prepared, valid_rows), table)
    del prepared  # its helper columns are not needed past here, and a million rows is a lot
    if strict and warnings:
        rejects += warnings
        valid_rows = _without(valid_rows, warnings)
        warnings = []
    rejects.sort(key=lambda p: p.row)
    return ValidationReport(
        batch_id=raw.batch_id,
        source_name=raw.source_name,
        sheet=raw.sheet,
        rows=len(frame),
        rejects=rejects,
        warnings=[*raw.notices, *notices, *_unknown_columns(raw), *warnings],
        bank_resolutions=banks.resolutions,
        not_checked=not_checked,
        unchecked=unchecked,
        reject_cells=_rejected_cells(frame, rejects),
        valid=len(valid_rows),
        legacy_ids=legacy_ids,
        build_instructions=partial(_instructions, frame, valid_rows, bank_ids),
    )


def _unchecked(valid_rows: pd.Index, bank_rows: list[int], no_services: bool) -> dict[int, str]:
    """Valid rows whose bank (a phone never looked up) or service (no services list at all)
    waits for the paying process's check: row -> "bank", "service" or "bank,service"."""
    if not bank_rows and not no_services:
        return {}  # the usual case: no set of every valid row (a million ints at the peak)
    valid = set(valid_rows.tolist())
    marks = {row: "bank" for row in bank_rows if row in valid}
    if no_services:
        marks = {row: ",".join(filter(None, (marks.get(row), "service"))) for row in valid}
    return marks


def _rows(frame: pd.DataFrame, rows: pd.Index) -> pd.DataFrame:
    # .loc copies every column; a batch with no rejects is the common case.
    return frame if len(rows) == len(frame) else frame.loc[rows]


def _rejected_cells(frame: pd.DataFrame, rejects: list[Problem]) -> dict[int, RejectedCells]:
    """What each rejected row's currency, amount, paymentType, name and requisites (masked)
    cells said."""
    rows = sorted({p.row for p in rejects if p.row in frame.index})
    if not rows:
        return {}
    bad_amounts = {p.row for p in rejects if p.column == "amount"}
    picked = frame.loc[rows]

    def column(name: str) -> list[str]:
        return picked[name].tolist() if name in picked else [""] * len(rows)

    return {
        row: RejectedCells(
            currency=currency if currency in ISO_4217_CODES else None,
            amount=None if row in bad_amounts else _amount_or_none(amount),
            payment_type=payment_type or None,
            name=name or None,
            # printable: a tail may hold a control character, which the report shows escaped.
            requisites_masked=printable(mask_rejected(requisites)) or None,
        )
        for row, currency, amount, payment_type, name, requisites in zip(
            rows,
            column("currency"),
            column("amount"),
            column("paymentType"),
            column("name"),
            column("requisites"),
            strict=True,
        )
    }


def _amount_or_none(text: str) -> Decimal | None:
    # A cell no rule refused parses; anything else is left for the reasons to describe.
    try:
        amount = Decimal(text)
    except (InvalidOperation, TypeError, ValueError):
        return None
    return amount if amount.is_finite() else None


def _without(rows: pd.Index, problems: list[Problem]) -> pd.Index:
    if not problems:
        return rows  # the usual case: no copy of a million row numbers per look-up
    return rows[~rows.isin(list({p.row for p in problems}))]


def _clean(rows: pd.Index, problems: list[Problem], columns: tuple[str, ...]) -> pd.Index:
    """`rows` but those with a problem in one of `columns`."""
    return _without(rows, [p for p in problems if p.column in columns])


def _with_external_ids(raw: RawBatch) -> tuple[pd.DataFrame, list[Problem], dict[str, str]]:
    """The frame with every blank externalId derived, the notice saying so, and the derived ids
    whose first derivation differs (identity.legacy_external_ids)."""
    frame = raw.frame
    if "externalId" not in frame:
        notice = Problem(
            FILE_ROW,
            "externalId",
            "external_id_derived",
            "no externalId column: each row's id is derived from its own recipient, amount, "
            "currency, paymentType, userId and bank (docs/operator/rejected-rows.md), so a row "
            "already paid is not paid again; add an externalId column to pay the same payout "
            "again on purpose",
        )
        derived = derived_external_ids(frame)
        return frame.assign(externalId=derived), [notice], legacy_external_ids(frame, derived)
    blank = cells(frame["externalId"]) == ""
    if not blank.any():
        return frame, [], {}
    ids = frame["externalId"].copy()
    derived = derived_external_ids(frame.loc[blank])
    ids[blank] = derived
    return frame.assign(externalId=ids), [], legacy_external_ids(frame.loc[blank], derived)


def _with_id(problem: Problem, ids: pd.Series) -> Problem:
    external_id = str(ids.get(problem.row, ""))
    return Problem(
        problem.row, problem.column, problem.rule, problem.message, external_id, problem.value
    )


def _unknown_columns(raw: RawBatch) -> list[Problem]:
    return [
        Problem(
            FILE_ROW, name, "unknown_column", "this column is not a payout field and is not sent"
        )
        for name in raw.unknown_columns
    ]


def _optional(frame: pd.DataFrame, column: str) -> Iterable[str | None]:
    if column not in frame:
        return repeat(None, len(frame))
    return _each_distinct(frame, column, _text_or_none)


def _text_or_none(text: str) -> str | None:
    return text or None


def _service_id(text: str) -> int | None:
    return int(text) if text else None


def _each_distinct(frame: pd.DataFrame, column: str, convert: Callable[[str], T]) -> Iterator[T]:
    """The column's cells converted, each distinct text once: amounts, ids and blanks repeat,
    and a look-up per row stays in C where a conversion per row would not."""
    codes, distinct = pd.factorize(frame[column])
    converted = [convert(text) for text in distinct.tolist()]
    return map(converted.__getitem__, codes.tolist())


def _cells(frame: pd.DataFrame, column: str) -> Iterator[str]:
    # The column's own object array, walked lazily: no list of a million references per column
    # held at once while the instructions are built.
    walked: Iterator[str] = iter(cells(frame[column]))
    return walked


def _instructions(
    frame: pd.DataFrame, valid_rows: pd.Index, bank_ids: dict[int, str]
) -> list[PayoutInstruction]:
    frame = _rows(frame, valid_rows)
    banks = np.array(list(_optional(frame, "bankName")), dtype=object)
    if bank_ids:
        banks[frame.index.get_indexer(pd.Index(list(bank_ids)))] = list(bank_ids.values())
    services = (
        _each_distinct(frame, "serviceId", _service_id)
        if "serviceId" in frame
        else repeat(None, len(frame))
    )
    # A million new objects would set off repeated full collections that find no garbage.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(frame, banks.tolist(), services)
    finally:
        if collecting:
            gc.enable()


def _build(
    frame: pd.DataFrame, banks: list[str | None], services: Iterable[int | None]
) -> list[PayoutInstruction]:
    # tuple.__new__ over zipped columns, in PayoutInstruction's field order, stays in C: the
    # NamedTuple's own __new__ is a Python call per row, twice the time for a million rows.
    fields = zip(
        frame.index.tolist(),
        _cells(frame, "externalId"),
        _each_distinct(frame, "amount", Decimal),
        _cells(frame, "currency"),
        _cells(frame, "paymentType"),
        _cells(frame, "requisites"),
        _cells(frame, "name"),
        _cells(frame, "userId"),
        services,
        banks,
        _optional(frame, "note"),
        _optional(frame, "userEmail"),
        _optional(frame, "userPhone"),
        _optional(frame, "userIp"),
        _optional(frame, "callbackUrl"),
        strict=True,
    )
    return list(map(tuple.__new__, repeat(PayoutInstruction), fields))
