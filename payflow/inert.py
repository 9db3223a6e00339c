"""Cells that a spreadsheet program will never run as a formula (formula injection, CWE-1236).

Every report cell that comes from input (a file, the service, an operator) goes through
`inert_text` before it reaches a CSV or an XLSX. A value that starts with a character a
spreadsheet reads as the start of a formula or a control sequence gets a leading apostrophe,
the convention Excel and LibreOffice show as plain text; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Iterable

from openpyxl.cell.cell import Cell, WriteOnlyCell
from openpyxl.worksheet._write_only import WriteOnlyWorksheet
from openpyxl.worksheet.worksheet import Worksheet

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\n")
"""Leading characters that make Excel, LibreOffice or Google Sheets evaluate a cell."""


def inert_text(value: object) -> str:
    """`value` as text that no spreadsheet evaluates; None becomes the empty string."""
    if value is None:
        return ""
    text = str(value)
    if text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def is_inert(text: str) -> bool:
    """True when `text` cannot be read as a formula by a spreadsheet program."""
    return not text.startswith(FORMULA_TRIGGERS)


def inert_row(values: Iterable[object]) -> list[str | int]:
    """A report line: integers (row numbers, counts) kept, every other value `inert_text`."""
    return [
        value if isinstance(value, int) and not isinstance(value, bool) else inert_text(value)
        for value in values
    ]


def text_cells(sheet: Worksheet | WriteOnlyWorksheet, values: Iterable[object]) -> list[Cell]:
    """XLSX cells of `inert_row(values)`; text cells are typed 's', so never a formula."""
    cells: list[Cell] = []
    for value in inert_row(values):
        cell = WriteOnlyCell(sheet, value=value)
        if isinstance(value, str):
            cell.data_type = "s"
        cells.append(cell)
    return cells
