"""A sheet's heading row and column widths: small enough for the intake's rejects report to
import without the reconciliation workbook (which loads the ledger, SQLAlchemy and the
reconciliation: about 0.4 s of every `payflow validate`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from payflow.inert import text_cell
from payflow.reporting.printing import print_one_page_wide

BOLD = Font(bold=True)
# Right, a character in from the edge: flush right, "source_row" touched the next column's
# heading ("source_rowexternal_id") in LibreOffice and on paper.
HEADING_RIGHT = Alignment(horizontal="right", indent=1)
# openpyxl types its write-only sheets and cells loosely; they are handled as Any here.
Sheet = Any


def header_row(
    sheet: Sheet, names: Sequence[str], widths: Sequence[float], numbers: Sequence[str] = ()
) -> None:
    """Bold names over columns `widths` wide, kept in view while scrolling; the names in
    `numbers` right-aligned over their figures. Call it before any other row."""
    column_widths(sheet, widths)
    sheet.freeze_panes = "A2"
    print_one_page_wide(sheet)
    sheet.append([heading(sheet, n) if n in numbers else bold(sheet, n) for n in names])


def column_widths(sheet: Sheet, widths: Sequence[float]) -> None:
    """Set the first columns' widths (in characters): a spreadsheet's default cut ids short."""
    for index, width in enumerate(widths, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width


def bold(sheet: Sheet, text: str) -> Any:
    """A bold write-only cell of `text`."""
    cell = WriteOnlyCell(sheet, value=text)
    cell.font = BOLD
    return cell


def heading(sheet: Sheet, name: str) -> Any:
    """A bold heading over a column of numbers, aligned right as they are."""
    # On the left, "rows" read as the heading of the text column before it, and a long name
    # ran into the next one.
    cell = text_cell(sheet, name)
    cell.font = BOLD
    cell.alignment = HEADING_RIGHT
    return cell
