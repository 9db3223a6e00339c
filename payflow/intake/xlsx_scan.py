"""What an XLSX sheet's cells alone do not show, from one streamed scan of its XML: hidden rows
and columns, formulas saved without a result and cells under a merged cell."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field

from openpyxl.utils.cell import column_index_from_string, get_column_letter, range_boundaries

from payflow.intake.columns import ReadColumns
from payflow.intake.problems import MERGED_CELL, Problem
from payflow.intake.unpacking import member_chunks

_FORMULA = re.compile(rb"<(?:\w+:)?f[\s>/]")
_CELL = re.compile(rb"<(?:\w+:)?c\s([^>]*?)(?:/>|>(.*?)</(?:\w+:)?c>)", re.S)
_REFERENCE = re.compile(rb'\br="([A-Z]{1,3})([0-9]+)"')
_SAVED_VALUE = re.compile(rb"<(?:\w+:)?v>[^<]")
_TEXT_RESULT = re.compile(rb'\bt="str"')
_ROW = re.compile(rb"<(?:\w+:)?row\s([^>]*)>")
_HIDDEN = re.compile(rb'\bhidden="(?:1|true)"')
_ROW_NUMBER = re.compile(rb'\br="([0-9]+)"')
_COLUMNS = re.compile(rb"<(?:\w+:)?col\s([^>]*)>")
_SPAN = (re.compile(rb'\bmin="([0-9]+)"'), re.compile(rb'\bmax="([0-9]+)"'))
_MERGED = re.compile(rb'<(?:\w+:)?mergeCell\s[^>]*?\bref="([A-Z]{1,3}[0-9]+:[A-Z]{1,3}[0-9]+)"')
_TAG_TAIL = 4096
_MAX_COLUMN = 16_384  # XFD: a stated span past it is no column
HIDDEN_ROW = (
    "the row is hidden in the workbook (filtered out, or hidden by hand), so it was not seen: "
    "it {fate}; unhide it to {remedy}, or delete it"
)
HIDDEN_COLUMN = (
    "{column} is in column {letter}, hidden in the workbook, so its value was not seen: the row "
    "{fate}; unhide the column to check it, or delete the column"
)
NEVER_COMPUTED = (
    "{column} is a formula with no saved result (the file was written by a program, not saved "
    "by Excel): open it in Excel or LibreOffice and save it, or paste the values"
)


MERGED = (
    "{column} is part of the merged cells {cells}: it shows {first}'s value, but a merged cell "
    "holds its value in its first cell only, so this row's {column} reads empty; unmerge the "
    "cells and fill in every row"
)


def sheet_problems(
    archive: zipfile.ZipFile,
    path: str,
    header: list[str],
    rows: list[list[str]],
    columns: ReadColumns,
    scan: SheetScan | None = None,
) -> list[Problem]:
    """What the cells alone do not show, from one streamed scan of the sheet's XML (`scan`, when
    the sheet's one pass took it): hidden rows, and formulas saved without a result, hidden or
    merged cells of the `columns` read. A hidden row is a row's problem, not a column's: it is
    named whatever columns it fills."""
    scan = scan or _scan(archive, path)
    hidden = HIDDEN_ROW.format(fate=columns.fate, remedy=columns.remedy)
    problems = [
        Problem(row, "", "hidden_row", hidden) for row in sorted(scan.hidden_rows) if row > 1
    ]
    # A column the file's reader ignores hides nothing it sends: only its own columns count.
    sent = [h if h and columns.column_of(h) else "" for h in header]
    problems += _in_hidden_columns(scan.hidden_columns, sent, rows, columns.fate)
    problems += _under_merged_cells(sorted(scan.merged), sent, rows)
    if scan.has_formula:  # the common case has none: no cell is parsed
        problems += _formulas_never_computed(archive.read(path), sent)
    return problems


def _in_hidden_columns(
    hidden: set[int], header: list[str], rows: list[list[str]], fate: str
) -> list[Problem]:
    """A value in a hidden column read (`header` names only those), row by row: a hidden amount
    column was paid while the operator read the amounts of another, visible one. `fate`: what
    becomes of the row (ReadColumns.fate)."""
    found: list[Problem] = []
    for number in sorted(n for n in hidden if n <= len(header)):
        column = header[number - 1]
        if not column:
            continue
        message = HIDDEN_COLUMN.format(column=column, letter=get_column_letter(number), fate=fate)
        for row in range(2, len(rows) + 1):
            cells = rows[row - 1]
            if number <= len(cells) and cells[number - 1]:
                found.append(Problem(row, column, "hidden_column", message))
    return found


def _formulas_never_computed(xml: bytes, header: list[str]) -> list[Problem]:
    """Formula cells (of the columns `header` names) with no cached result, which the reader
    sees as empty: without this, a cell
    showing `=2*100` in Excel would be reported as "amount is required".

    Excel and LibreOffice save every formula's result; a workbook written by a script (openpyxl,
    for one) has none. A text result may be empty (`t="str"`); any other result has a value."""
    found: list[Problem] = []
    for cell in _CELL.finditer(xml):
        attributes, body = cell.group(1), cell.group(2) or b""
        if (
            _FORMULA.search(body) is None
            or _SAVED_VALUE.search(body)
            or _TEXT_RESULT.search(attributes)
        ):
            continue
        reference = _REFERENCE.search(attributes)
        if reference is None:
            continue
        index = column_index_from_string(reference.group(1).decode()) - 1
        row = int(reference.group(2))
        if row > 1 and index < len(header) and header[index]:
            column = header[index]
            message = NEVER_COMPUTED.format(column=column)
            found.append(Problem(row, column, "formula_without_value", message))
    return found


def _under_merged_cells(
    merged: list[bytes], header: list[str], rows: list[list[str]]
) -> list[Problem]:
    """A cell of a column read (`header` names only those) under a merged cell that shows a
    value, in a data row holding anything else: the sheet shows the merged value on every row it
    spans (a serviceId merged over three rows), but only its first cell holds it, so the rows
    below would read it as empty and be paid without it (the merchant's default service instead
    of the one the operator saw)."""
    found: list[Problem] = []
    for reference in merged:
        cells = reference.decode()
        first_column, first_row, last_column, last_row = range_boundaries(cells)
        assert first_column and first_row and last_column and last_row  # a cell range has all
        if first_row > len(rows) or first_column > len(rows[first_row - 1]):
            continue
        if not rows[first_row - 1][first_column - 1]:
            continue  # merged empty cells show nothing, and nothing is lost
        first = f"{get_column_letter(first_column)}{first_row}"
        for row in range(max(first_row, 2), min(last_row, len(rows)) + 1):
            if not any(rows[row - 1]):
                continue  # nothing else on the row: no payout to refuse
            for index in range(first_column - 1, min(last_column, len(header))):
                if (row, index + 1) == (first_row, first_column) or not header[index]:
                    continue
                column = header[index]
                message = MERGED.format(column=column, cells=cells, first=first)
                found.append(Problem(row, column, MERGED_CELL, message))
    return found


@dataclass
class SheetScan:
    """What `sheet_problems` reads of a sheet's XML, taken a piece at a time: pieces that end
    anywhere and overlap (`_scan`), or that end before a tag (`BombCheck.read_checked`)."""

    has_formula: bool = False
    hidden_rows: set[int] = field(default_factory=set)
    hidden_columns: set[int] = field(default_factory=set)
    merged: set[bytes] = field(default_factory=set)  # a range in two pieces' overlap, once

    def take(self, text: bytes) -> None:
        """Whether `text` holds a formula, its hidden rows and columns and merged cell ranges."""
        # `<f` or `<x:f` holds one of these: two scans for bytes instead of a regex at each '<'.
        if not self.has_formula and (b"<f" in text or b":f" in text):
            self.has_formula = _FORMULA.search(text) is not None
        # Rows and columns are parsed only in a piece that hides something: most hide nothing.
        if b"hidden=" in text:
            for row in _ROW.finditer(text):
                if _HIDDEN.search(row.group(1)) and (number := _ROW_NUMBER.search(row.group(1))):
                    self.hidden_rows.add(int(number.group(1)))
            # <cols> comes before the rows: one piece or two hold it, and LibreOffice writes
            # hidden="false" on every row, so the cheap test spares a search of each piece.
            columns = _COLUMNS.finditer(text) if b"col " in text else ()
            for column in columns:
                attributes = column.group(1)
                span = [pattern.search(attributes) for pattern in _SPAN]
                if _HIDDEN.search(attributes) and span[0] and span[1]:
                    first, last = (int(found.group(1)) for found in span if found)
                    self.hidden_columns.update(range(first, min(last, _MAX_COLUMN) + 1))
        self.merged.update(_MERGED.findall(text) if b"mergeCell" in text else ())


def _scan(archive: zipfile.ZipFile, path: str) -> SheetScan:
    """The sheet's `SheetScan`, read a megabyte at a time."""
    scan = SheetScan()
    tail = b""
    for chunk in member_chunks(archive, path):
        scan.take(tail + chunk)
        tail = chunk[-_TAG_TAIL:]  # a tag cut between two chunks is whole in the next text
    return scan
