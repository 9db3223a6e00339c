"""A write-only sheet whose lines are written here as SpreadsheetML, not as openpyxl cell objects.

openpyxl makes, binds, styles and serialises one object per cell: most of the CPU a report line
cost. The big sheets of one line per row (the reconciliation report's rows and rejects, the
rejects workbook of a validation) write each line's XML here instead: the XML openpyxl writes
for the same cells. Strings inline, numbers through openpyxl's `safe_string` (`%.16g`, as it
writes a Decimal), times as Excel serial numbers in the workbook's epoch, each style as the id
openpyxl registered for it (`CellStyles.style_id`), a tall line's height as its row dimension,
text other than ASCII as character references. Everything around the lines (column widths,
frozen pane, filter, print set-up) is openpyxl's, set on this sheet as on any other: when the
sheet closes, openpyxl writes it without lines and they take the place of its empty
`<sheetData>`.

Every str is a string cell, control characters shown escaped (`payflow.inert.text_cell`'s rule):
no input text becomes a formula, however it starts.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, cast

from openpyxl import Workbook
from openpyxl.cell.cell import Cell
from openpyxl.compat import safe_string
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.utils.datetime import to_excel
from openpyxl.worksheet._write_only import WriteOnlyWorksheet
from openpyxl.worksheet.dimensions import RowDimension

from payflow.redact import CONTROL_PATTERN, printable
from payflow.reporting.cell_styles import CellStyles
from payflow.reporting.printing import line_height, tall_alignment

Value = str | int | float | Decimal | datetime | None
MAX_TEXT = 32767  # characters in a cell: openpyxl cuts a longer text there
EMPTY_ROWS = b"<sheetData></sheetData>"
# Characters openpyxl's writer (lxml) refuses in a text: XML 1.0 has no place for them.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
_UNUSUAL = re.compile(f"{CONTROL_PATTERN}|{_NOT_XML.pattern}")
LINES_PER_WRITE = 512  # lines joined and encoded at once on their way to the temporary file


class XmlRowsSheet(WriteOnlyWorksheet):
    """A sheet of `workbook` (write-only) named `title`, its lines written as XML here;
    `styles`: the workbook's styles cache."""

    def __init__(self, workbook: Workbook, title: str, styles: CellStyles) -> None:
        super().__init__(workbook, title)
        cast(Any, workbook)._add_sheet(self)  # as `create_sheet` adds its own kind
        self._styles = styles
        self._epoch = workbook.epoch
        # Closed by `close` or `discard_lines`: it outlives this call by design.
        self._lines = tempfile.TemporaryFile()  # noqa: SIM115
        self._pending: list[str] = []
        self._count = 0
        self._letters: list[str] = []
        self._heights: dict[int, str] = {}

    def style(
        self,
        *,
        number_format: str | None = None,
        font: Font | None = None,
        fill: PatternFill | None = None,
        alignment: Alignment | None = None,
    ) -> int:
        """The id of the cell style wearing these (0: none)."""
        return self._styles.style_id(
            self, number_format=number_format, font=font, fill=fill, alignment=alignment
        )

    def append(self, row: Iterable[Any]) -> None:
        """A line of values and openpyxl cells (a header of bold names), as openpyxl takes it."""
        values: list[Value] = []
        styles: list[int] = []
        for item in row:
            if isinstance(item, Cell):
                if item.data_type not in ("s", "n", "d"):
                    raise TypeError(f"a {item.data_type!r} cell is not written here")
                value: Any = item.value  # of the three types just checked
                values.append(value)
                styles.append(item.style_id if item.has_style else 0)
            else:
                values.append(item)
                styles.append(0)
        self.append_line(values, styles)

    def append_tall(self, values: Sequence[Value], lines: int) -> None:
        """A line `lines` lines tall (`lines_needed`): when over one, each cell at the top and
        its text wrapped, as `reporting.workbook.append_tall` lays out an openpyxl line."""
        if lines == 1:
            self.append_line(values)
            return
        # Looked up in the order of the cells, so the ids are numbered as openpyxl numbered them.
        styles = [
            0 if value is None else self.style(alignment=tall_alignment(isinstance(value, str)))
            for value in values
        ]
        self.append_line(values, styles, lines)

    def append_line(
        self, values: Sequence[Value], styles: Sequence[int] = (), lines: int = 1
    ) -> None:
        """The next line: `values` from column A, `styles` their style ids (none: unstyled),
        `lines` lines tall. None leaves its cell out, as openpyxl does."""
        self._count += 1
        number = str(self._count)
        if len(values) > len(self._letters):
            self._letters = [get_column_letter(i) for i in range(1, len(values) + 1)]
        parts = [f'<row r="{number}"{self._height(lines)}>']
        letters = self._letters
        for index, value in enumerate(values):
            if value is None:
                continue
            start = f'<c r="{letters[index]}{number}"'
            style = styles[index] if styles else 0
            if style:
                start += f' s="{style}"'
            if isinstance(value, str):
                parts.append(_text_cell(start, value))
            else:
                parts.append(f'{start} t="n"><v>{self._number(value)}</v></c>')
        parts.append("</row>")
        self._pending.append("".join(parts))
        if len(self._pending) >= LINES_PER_WRITE:
            self._write_pending()

    def close(self) -> None:
        """Let openpyxl write the sheet without lines, then put the lines in their place."""
        try:
            self._write_pending()
            super().close()
            path = cast(Any, self)._writer.out
            with open(path, "rb") as shell:
                head, found, tail = shell.read().partition(EMPTY_ROWS)
            if not found:
                raise RuntimeError("openpyxl wrote no empty <sheetData> to put the lines in")
            with open(path, "wb") as sheet:
                sheet.write(head + b"<sheetData>")
                self._lines.seek(0)
                shutil.copyfileobj(self._lines, sheet, 1 << 20)
                sheet.write(b"</sheetData>" + tail)
        finally:
            self._lines.close()

    def discard_lines(self) -> None:
        """Drop the lines written so far (the report was given up)."""
        self._pending.clear()
        self._lines.close()

    def _write_pending(self) -> None:
        if self._pending:
            # As lxml writes a text: ASCII, any other character as a character reference.
            self._lines.write("".join(self._pending).encode("ascii", "xmlcharrefreplace"))
            self._pending.clear()

    def _height(self, lines: int) -> str:
        if lines == 1:
            return ""
        known = self._heights.get(lines)
        if known is None:
            dimension = RowDimension(cast(Any, self), ht=line_height(lines))
            known = self._heights[lines] = "".join(f' {k}="{v}"' for k, v in dimension)
        return known

    def _number(self, value: Value) -> str:
        if isinstance(value, datetime):
            if value.tzinfo is not None:
                raise TypeError("a time in a sheet is written without its zone")
            return safe_string(to_excel(value, self._epoch))  # type: ignore[no-untyped-call]
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            raise TypeError(f"{type(value).__name__} is not written here")
        return safe_string(value)


def _text_cell(start: str, value: str) -> str:
    """A string cell as `text_cell` makes it and openpyxl writes it (`start`: its tag so far)."""
    if _UNUSUAL.search(value) is not None:
        value = printable(value)
        if _NOT_XML.search(value) is not None:
            raise ValueError(f"{value!r} has a character an XLSX cannot hold")
    text = value[:MAX_TEXT]
    if not text:
        return f'{start} t="inlineStr"></c>'
    space = ' xml:space="preserve"' if text != text.strip() else ""
    if "&" in text or "<" in text or ">" in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f'{start} t="inlineStr"><is><t{space}>{text}</t></is></c>'
