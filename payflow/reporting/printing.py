"""How a report sheet reads on paper and on screen: printed landscape, one page wide, its header
row on every page; a long text wrapped in its column, on a line tall enough to show it all.

A spreadsheet program does not grow a line for wrapped text it did not lay out itself (a
write-only sheet sets no heights), so the height is estimated from the text's length.
"""

from __future__ import annotations

import math
from typing import Any

from openpyxl.styles import Alignment

LINE_POINTS = 15.0  # the height of one line of text in a spreadsheet row
WRAP = Alignment(wrap_text=True, vertical="top")
TOP = Alignment(vertical="top")


def tall_alignment(text: bool) -> Alignment:
    """A cell's alignment on a line of wrapped text: a text wrapped, anything at the top (at the
    bottom of a tall line a figure sat beside the text's last words, not its first)."""
    return WRAP if text else TOP


def print_one_page_wide(sheet: Any, *, header_rows: int = 1) -> None:
    """Print the sheet (or convert it to PDF) landscape, one page wide and as many long as it
    takes, its first `header_rows` lines repeated on every page (0: none)."""
    print_pages_wide(sheet, 1, header_rows=header_rows)


def print_pages_wide(
    sheet: Any, pages: int, *, header_rows: int = 1, key_columns: str | None = None
) -> None:
    """As `print_one_page_wide`, `pages` pages across, `key_columns` (such as "A:B") repeated on
    each, so every page names the rows its figures belong to."""
    sheet.page_setup.orientation = "landscape"
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.page_setup.fitToWidth = pages
    sheet.page_setup.fitToHeight = 0  # as many pages down as the lines need
    if header_rows:
        sheet.print_title_rows = f"1:{header_rows}"
    if key_columns:
        sheet.print_title_cols = key_columns


def lines_needed(text: str, width: float) -> int:
    """The lines `text` takes wrapped in a column `width` wide (at least one)."""
    # A width holds a few more average letters than its number, less the cell's margins and
    # what a line loses by breaking between words (estimated short, a line hid its last words).
    return max(1, math.ceil(len(text) / max(width * 1.2 - 6, 1)))


def line_height(lines: int) -> float:
    """The height in points of a spreadsheet line holding `lines` lines of text."""
    return LINE_POINTS * lines
