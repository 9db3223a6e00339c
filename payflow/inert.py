"""Cells that a spreadsheet program will never run as a formula (formula injection, CWE-1236).

Every report cell that comes from input (a file, the service, an operator) goes through this
module before it reaches a CSV or an XLSX. A CSV cell has no type, so a value that starts with a
character a spreadsheet reads as the start of a formula or a control sequence gets a leading
apostrophe (`inert_text`), the convention Excel and LibreOffice show as plain text. An XLSX cell
has a type: input text is written as a string cell (`text_cell`), which no spreadsheet evaluates,
so it keeps the value as the input had it, without the apostrophe. Control characters are shown
escaped in both (`printable`): an XLSX cannot hold most of them at all (openpyxl refused a
service's statusMessage with one and the whole report failed), and in a CSV read in a terminal
an escape sequence would act.
"""

from __future__ import annotations

from collections.abc import Iterable

from openpyxl.cell.cell import Cell, WriteOnlyCell
from openpyxl.worksheet._write_only import WriteOnlyWorksheet
from openpyxl.worksheet.worksheet import Worksheet

from payflow.redact import printable

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\n")
"""Leading characters that make Excel, LibreOffice or Google Sheets evaluate a CSV cell."""


def inert_text(value: object) -> str:
    """`value` as CSV text that no spreadsheet evaluates; None becomes the empty string."""
    if value is None:
        return ""
    text = printable(str(value))
    if text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def inert_row(values: Iterable[object]) -> list[str | int]:
    """A CSV line: integers (row numbers, counts) kept, every other value `inert_text`."""
    return [
        value if isinstance(value, int) and not isinstance(value, bool) else inert_text(value)
        for value in values
    ]


def text_cell(sheet: Worksheet | WriteOnlyWorksheet, value: object) -> Cell:
    """An XLSX string cell holding `value` as written; None becomes the empty string."""
    cell = WriteOnlyCell(sheet, value="" if value is None else printable(str(value)))
    # openpyxl infers a formula from a leading "=" and an error from "#N/A"; typed "s", the cell
    # is text whatever it starts with, so it needs no apostrophe.
    cell.data_type = "s"
    return cell


def text_cells(sheet: Worksheet | WriteOnlyWorksheet, values: Iterable[object]) -> list[Cell]:
    """An XLSX line: ready-made cells (amounts) kept, integers (row numbers, counts) as numbers,
    every other value a `text_cell`."""
    cells: list[Cell] = []
    for value in values:
        if isinstance(value, Cell):
            cells.append(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            cells.append(WriteOnlyCell(sheet, value=value))
        else:
            cells.append(text_cell(sheet, value))
    return cells
