"""What an XLSX sheet's cells alone do not show, from one streamed scan of its XML: hidden rows,
formulas saved without a result and cells under a merged cell."""

from __future__ import annotations

import re
import zipfile

from openpyxl.utils.cell import column_index_from_string, get_column_letter, range_boundaries

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
_MERGED = re.compile(rb'<(?:\w+:)?mergeCell\s[^>]*?\bref="([A-Z]{1,3}[0-9]+:[A-Z]{1,3}[0-9]+)"')
_TAG_TAIL = 4096
HIDDEN_ROW = (
    "the row is hidden in the workbook (filtered out, or hidden by hand), so it was not seen: "
    "it is not paid; unhide it to pay it, or delete it"
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
    archive: zipfile.ZipFile, path: str, header: list[str], rows: list[list[str]]
) -> list[Problem]:
    """What the cells alone do not show, from one streamed scan of the sheet's XML: hidden rows,
    formulas saved without a result and cells under a merged cell."""
    has_formula, hidden, merged = _scan(archive, path)
    problems = [Problem(row, "", "hidden_row", HIDDEN_ROW) for row in sorted(hidden) if row > 1]
    problems += _under_merged_cells(sorted(merged), header, rows)
    if has_formula:  # the common case has none: no cell is parsed
        problems += _formulas_never_computed(archive.read(path), header)
    return problems


def _formulas_never_computed(xml: bytes, header: list[str]) -> list[Problem]:
    """Formula cells with no cached result, which the reader sees as empty: without this, a cell
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
    """A cell under a merged cell that shows a value, in a data row holding anything else: the
    sheet shows the merged value on every row it spans (a serviceId merged over three rows), but
    only its first cell holds it, so the rows below would read it as empty and be paid without
    it (the merchant's default service instead of the one the operator saw)."""
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


def _scan(archive: zipfile.ZipFile, path: str) -> tuple[bool, set[int], set[bytes]]:
    """Whether the sheet's XML holds a formula, its hidden rows and its merged cell ranges, read
    a megabyte at a time."""
    has_formula, hidden = False, set()
    merged: set[bytes] = set()
    tail = b""
    for chunk in member_chunks(archive, path):
        text = tail + chunk
        has_formula = has_formula or _FORMULA.search(text) is not None
        # Rows are parsed only in a chunk that hides something: most hide nothing.
        for row in _ROW.finditer(text) if b"hidden=" in text else ():
            if _HIDDEN.search(row.group(1)) and (number := _ROW_NUMBER.search(row.group(1))):
                hidden.add(int(number.group(1)))
        # A set: a range in the overlap of two chunks is found twice.
        merged.update(_MERGED.findall(text) if b"mergeCell" in text else ())
        tail = chunk[-_TAG_TAIL:]  # a tag cut between two chunks is whole in the next text
    return has_formula, hidden, merged
