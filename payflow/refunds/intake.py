"""Reading a refund file: its columns, header matching, and the externalId of rows without one."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from payflow.intake.amounts import read_russian_amounts
from payflow.intake.columns import ReadColumns
from payflow.intake.identity import (
    REFUND_IDENTITY_COLUMNS,
    REFUND_PREFIX,
    derived_external_ids,
)
from payflow.intake.problems import BatchFileError, Problem
from payflow.intake.reading import (
    FIRST_DATA_ROW,
    RawTable,
    batch_id_of,
    read_table,
    without_blank_rows,
)
from payflow.schemas.refund_schema import UUID_PATTERN

REQUIRED_COLUMNS = ("orderId",)
OPTIONAL_COLUMNS = ("externalId", "amount", "reason", "callbackUrl")
ALL_COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
# A reason is free text and may be a date; any other column read is an id, amount or URL.
REFUND_COLUMNS = ReadColumns(ALL_COLUMNS, frozenset({"reason"}), "is not refunded", "refund it")


@dataclass
class RefundFile:
    """Text cells of a refund file under the canonical column names; index = spreadsheet row.

    Every column is present (an absent optional one is empty); externalId is filled in."""

    batch_id: str
    source_name: str
    frame: pd.DataFrame
    unknown_columns: tuple[str, ...] = ()
    read_problems: list[Problem] = field(default_factory=list)
    derived_ids: bool = False
    derived_rows: frozenset[int] = frozenset()  # rows whose externalId was derived, not written
    sheet: str | None = None  # the XLSX sheet read (None for a CSV)
    notices: list[Problem] = field(default_factory=list)  # how cells were read (told, kept)


def read_refund_file(path: str | Path, sheet: str | None = None) -> RefundFile:
    """Read a CSV or XLSX refund file; BatchFileError (one line) when it cannot be used."""
    return _refund_file(read_table(path, sheet, columns=REFUND_COLUMNS))


def refund_file_from_rows(rows: list[list[str]], source_name: str = "rows") -> RefundFile:
    """A refund file from text rows (header first), as if read from a file; for tests."""
    header, body = rows[0], rows[1:]
    frame = pd.DataFrame([(r + [""] * len(header))[: len(header)] for r in body], columns=header)
    data = repr(rows).encode("utf-8")
    return _refund_file(RawTable(batch_id_of(data), source_name, frame.astype(str)))


def _refund_file(table: RawTable) -> RefundFile:
    name, frame = table.source_name, table.frame
    renames: dict[str, str] = {}
    unknown: list[str] = []
    for header in frame.columns:
        column = REFUND_COLUMNS.column_of(str(header))
        if column is None:
            if str(header).strip():
                unknown.append(str(header).strip())
        elif column in renames.values():
            raise BatchFileError(f"{name}: column {column} is given more than once")
        else:
            renames[str(header)] = column
    missing = [c for c in REQUIRED_COLUMNS if c not in renames.values()]
    if missing:
        raise BatchFileError(f"{name}: required column missing: {', '.join(missing)}")
    frame = frame[list(renames)].rename(columns=renames)
    frame.index = pd.RangeIndex(FIRST_DATA_ROW, FIRST_DATA_ROW + len(frame))
    # Named by the refund column each cell is read as, as a payout file's are.
    problems = [replace(p, column=renames.get(p.column, p.column)) for p in table.read_problems]
    frame = without_blank_rows(frame, problems)
    if frame.empty:
        raise BatchFileError(f"{name} has a header but no data rows")
    notices = list(table.notices)  # Windows-1251, as a payout file's
    if table.decimal_comma:
        # Read before the derived ids, as a payout file's: `1 250,50` is 1250.50 in a `;` file.
        frame, amounts = read_russian_amounts(frame)
        notices += amounts
    for column in OPTIONAL_COLUMNS:
        if column not in frame:
            frame[column] = ""
    frame = frame[list(ALL_COLUMNS)].copy()
    # A UUID is one id whatever its letters' case; the service names its orders in lower case,
    # and an order id typed in capitals read as "no such order". Only a UUID: a cell rejected
    # as no UUID is shown in the report as the operator wrote it.
    uuid = frame["orderId"].str.fullmatch(UUID_PATTERN)
    frame.loc[uuid, "orderId"] = frame.loc[uuid, "orderId"].str.lower()
    had_column = "externalId" in renames.values()
    # Derived from the row's own order and amount, never from the file (design.md, invariant 2).
    blank = frame["externalId"] == ""
    frame.loc[blank, "externalId"] = derived_external_ids(
        frame.loc[blank], columns=REFUND_IDENTITY_COLUMNS, prefix=REFUND_PREFIX
    )
    return RefundFile(
        table.batch_id,
        name,
        frame,
        tuple(unknown),
        problems,
        derived_ids=not had_column,
        derived_rows=frozenset(frame.index[blank].tolist()),
        sheet=table.sheet,
        notices=notices,
    )
