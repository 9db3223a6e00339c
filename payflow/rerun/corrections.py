"""`--corrections FILE`: new requisites, bank or name for rows being rerun, validated like a batch.

Amount and currency never change in a rerun (that would be a new payout, not a rerun); any other
payout field stays as first sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path

from payflow.intake import RawBatch, ValidationReport, batch_from_rows
from payflow.intake.columns import PAYOUT_COLUMNS, REQUIRED_COLUMNS, match_headers
from payflow.intake.problems import BatchFileError
from payflow.intake.reading import read_table
from payflow.model import PayoutInstruction
from payflow.rerun.candidates import RerunRefused
from payflow.wording import counted

Validate = Callable[[RawBatch], ValidationReport]
CORRECTABLE = ("requisites", "bankName", "name")
KEPT = ("amount", "currency")  # may be repeated in the file, but only unchanged
# Read only to check a corrected account number against its bank's key, as a batch file's bik
# is; the ledger keeps no bik, so a correction without one is checked without the key.
CHECK_ONLY = ("bik",)
_FIELD_OF = {"requisites": "requisites", "bankName": "bank_name", "name": "name"}
# The columns of a batch file, in the order validation reads them, and the field of each.
_BATCH_COLUMNS = {
    "externalId": "external_id",
    "amount": "amount",
    "currency": "currency",
    "paymentType": "payment_type",
    "requisites": "requisites",
    "name": "name",
    "userId": "user_id",
    "serviceId": "service_id",
    "bankName": "bank_name",
    "note": "note",
    "userEmail": "user_email",
    "userPhone": "user_phone",
    "userIp": "user_ip",
    "callbackUrl": "callback_url",
}


@dataclass(frozen=True, slots=True)
class Correction:
    """New values for one row, keyed by its original externalId; None keeps the old value."""

    external_id: str
    changes: dict[str, str]  # PayoutInstruction field -> new text
    kept: dict[str, str]  # amount / currency as written in the file, checked unchanged
    checks: dict[str, str] = field(default_factory=dict)  # bik, for validation only


# A correction's row is a payout's, but hiding it keeps a correction from being applied.
CORRECTION_COLUMNS = replace(PAYOUT_COLUMNS, fate="is not applied", remedy="apply it")


def _read_rows(path: Path) -> list[list[str]]:
    """Text cells of a CSV or XLSX file, header first, read by the batch reader itself."""
    try:
        table = read_table(path, columns=CORRECTION_COLUMNS)
    except BatchFileError as exc:
        raise RerunRefused(str(exc)) from None
    if table.read_problems:
        # A hidden row or column, a merged cell, a date or #N/A read in place of what shows: a
        # rerun would go to requisites nobody saw (the batch reader rejects such rows; here a
        # file is all or nothing, as a correction applies to a row already checked once).
        first, more = table.read_problems[0], len(table.read_problems) - 1
        others = f" (and {counted(more, 'more problem')})" if more else ""
        where = f"row {first.row}" + (f", {first.column}" if first.column else "")
        raise RerunRefused(
            f"{path.name}: {where}: {first.message} ({first.rule}){others}; nothing was rerun: "
            "fix the file so every cell reads as it shows"
        )
    frame = table.frame
    rows = [[str(cell) for cell in row] for row in frame.itertuples(index=False)]
    return [[str(c) for c in frame.columns], *[row for row in rows if any(row)]]


def read_corrections(path: Path) -> dict[str, Correction]:
    """Read a corrections file (CSV or XLSX); refuses columns a rerun may not change."""
    rows = _read_rows(path)
    if not rows:
        raise RerunRefused(f"{path.name} is empty")
    match = match_headers(rows[0])
    columns = [match.renames.get(h, h.strip()) for h in rows[0]]
    if "externalId" not in columns:
        raise RerunRefused(f"{path.name}: needs an externalId column naming the original rows")
    allowed = {"externalId", *CORRECTABLE, *KEPT, *CHECK_ONLY}
    refused = [c for c in columns if c and c not in allowed]
    if refused or match.duplicated:
        raise RerunRefused(
            f"{path.name}: a rerun may change only requisites, bankName and name (a bik column "
            f"checks a corrected account), not {', '.join(refused or match.duplicated)}"
        )
    out: dict[str, Correction] = {}
    for cells in rows[1:]:
        record = dict(zip(columns, [c.strip() for c in cells], strict=False))
        ext = record.get("externalId", "")
        if not ext:
            continue
        if ext in out:
            raise RerunRefused(f"{path.name}: externalId {ext!r} appears more than once")
        changes = {_FIELD_OF[c]: record[c] for c in CORRECTABLE if record.get(c)}
        kept = {c: record[c] for c in KEPT if record.get(c)}
        checks = {c: record[c] for c in CHECK_ONLY if record.get(c)}
        out[ext] = Correction(ext, changes, kept, checks)
    return out


def _check_kept(correction: Correction, original: PayoutInstruction) -> None:
    amount = correction.kept.get("amount")
    if amount is not None:
        try:
            same = Decimal(amount.replace(" ", "")) == original.amount
        except InvalidOperation:
            same = False
        if not same:
            raise RerunRefused(
                f"{correction.external_id}: a rerun cannot change the amount; "
                "a new amount is a new payout, upload it as a new batch"
            )
    currency = correction.kept.get("currency")
    if currency is not None and currency.strip().upper() != original.currency.upper():
        raise RerunRefused(
            f"{correction.external_id}: a rerun cannot change the currency; "
            "a new currency is a new payout, upload it as a new batch"
        )


def _corrected(instruction: PayoutInstruction, correction: Correction) -> PayoutInstruction:
    changes = correction.changes
    return instruction._replace(
        requisites=changes.get("requisites", instruction.requisites),
        bank_name=changes.get("bank_name", instruction.bank_name),
        name=changes.get("name", instruction.name),
    )


def _cell(instruction: PayoutInstruction, field_name: str) -> str:
    value = getattr(instruction, field_name)
    return "" if value is None else str(value)


def _validated(
    drafts: Sequence[tuple[str, PayoutInstruction, Correction]], validate: Validate
) -> dict[str, PayoutInstruction]:
    """Validate corrected rows as one batch file; map each valid one back to its root."""
    # Optional columns only when some row fills them, as an operator's file would have them.
    header = [
        column
        for column, name in _BATCH_COLUMNS.items()
        if column in REQUIRED_COLUMNS or any(_cell(i, name) for _, i, _ in drafts)
    ]
    checked = [column for column in CHECK_ONLY if any(c.checks.get(column) for *_, c in drafts)]
    rows = [header + checked] + [
        [_cell(i, _BATCH_COLUMNS[h]) for h in header] + [c.checks.get(h, "") for h in checked]
        for _, i, c in drafts
    ]
    report = validate(batch_from_rows(rows, "corrections"))
    by_line = {line: draft for line, draft in enumerate(drafts, start=2)}
    problems = report.rejected_rows()
    if problems:
        shown = [
            f"{by_line[line][0]}: {'; '.join(reasons)}"
            for line, reasons in sorted(problems.items())
            if line in by_line
        ]
        raise RerunRefused("corrections break the batch rules: " + " | ".join(shown))
    return {
        by_line[i.row_number][0]: i._replace(row_number=by_line[i.row_number][1].row_number)
        for i in report.instructions
    }


def apply_corrections(
    instructions: Mapping[str, PayoutInstruction],
    corrections: Mapping[str, Correction],
    aliases: Mapping[str, str],
    validate: Validate,
) -> dict[str, PayoutInstruction]:
    """The instructions (by root externalId) with corrections applied and validated.

    `aliases` maps the latest attempt's externalId to its root, so a correction may name either.
    """
    by_root: dict[str, Correction] = {}
    for key, correction in corrections.items():
        root = key if key in instructions else aliases.get(key)
        if root is None:
            raise RerunRefused(f"corrections name {key!r}, which is not among the rows rerun")
        _check_kept(correction, instructions[root])
        by_root[root] = correction
    drafts = [
        (root, _corrected(instructions[root], correction), correction)
        for root, correction in sorted(by_root.items())
        if correction.changes
    ]
    if not drafts:
        return dict(instructions)
    return {**instructions, **_validated(drafts, validate)}
