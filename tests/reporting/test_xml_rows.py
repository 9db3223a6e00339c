"""The sheets written as XML (`reporting.xml_rows`) are the sheets openpyxl wrote from cells.

Each report is written twice: as payflow writes it, and with its line sheets made of openpyxl
cells the way they were before (`text_cell` for text, a cell styled by the same style, a tall
line's height as a row dimension). Read back with openpyxl, every cell of every sheet has the
same value, type, number format, font, fill and alignment, every line the same height; the line
sheets' XML is the same bytes. (The styles part may number its custom number formats apart: a
cell made with a time registered openpyxl's default time format, which no cell wears.)
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Sequence
from copy import copy
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.worksheet._write_only import WriteOnlyWorksheet

from payflow.inert import text_cell, text_cells
from payflow.intake import Problem, ValidationReport, report_files
from payflow.ledger import RowOutcome
from payflow.ledger.findings import FindingView
from payflow.reporting import workbook as report_workbook
from payflow.reporting.cell_styles import CellStyles
from payflow.reporting.layout import ROW_COLUMNS, Cell, Kind
from payflow.reporting.printing import line_height
from payflow.reporting.summary import Summary
from payflow.reporting.workbook import WorkbookWriter, append_tall

# Every kind of text a cell can get from input: formula triggers, XML's own characters, quotes,
# spaces kept at either end, letters other than ASCII, control characters (shown escaped), an
# error code, a text long enough to make its line tall, and one past a cell's 32,767 characters.
TEXTS = (
    "",
    "plain",
    " spaced at both ends ",
    '=HYPERLINK("http://evil.example","x")',
    "+1",
    "-1",
    "@SUM(1,2)",
    "#N/A",
    "<b> & </b> ]]> \"quoted\" 'single'",
    "Дмитрий Иванов, Zoë, 😀",
    "tab\there, bell\x07, next line\n, C1\x85, separator\u2028",
    "a long status message that runs on " * 12,
    "x" * 40_000,
)
CURRENCIES = ("XOF", "RUB", "KWD", "KES", "")
AMOUNTS = (Decimal("1500"), Decimal("1234.50"), Decimal("0.125"), Decimal("123456789012.34"))
WHEN = datetime(2026, 11, 29, 10, 3, 4, 123456)


class OpenpyxlLines(WriteOnlyWorksheet):
    """The line sheet as it was: a line of openpyxl cells, appended to a write-only sheet."""

    def __init__(self, workbook: Workbook, title: str, styles: CellStyles) -> None:
        super().__init__(workbook, title)
        workbook._add_sheet(self)  # type: ignore[attr-defined]
        self._styles = styles
        self._count = 0

    def style(self, **wears: Any) -> int:
        return self._styles.style_id(self, **wears)

    def append(self, row: Any) -> None:
        self._count += 1
        super().append(row)

    def append_line(
        self, values: Sequence[Any], styles: Sequence[int] = (), lines: int = 1
    ) -> None:
        cells: list[Any] = []
        for index, value in enumerate(values):
            style = styles[index] if styles else 0
            if value is None:
                cells.append(None)
                continue
            cell = text_cell(self, value) if isinstance(value, str) else WriteOnlyCell(self, value)
            if style:
                cell._style = copy(self.parent._cell_styles[style])
            cells.append(cell)
        number = self._count + 1
        if lines > 1:
            self.row_dimensions[number].height = line_height(lines)
        self.append(cells)
        if lines > 1:
            del self.row_dimensions[number]

    def append_tall(self, values: Sequence[Any], lines: int) -> None:
        append_tall(self, self._count + 1, text_cells(self, values), lines, self._styles)

    def discard_lines(self) -> None:
        pass


def _report_lines() -> Iterator[tuple[list[Cell], list[str] | None]]:
    """Lines of every outcome, currency and kind of value, some with no amount or time."""
    number = 1
    for outcome in RowOutcome:
        for currency in CURRENCIES:
            number += 1
            cells: list[Cell] = []
            for at, column in enumerate(ROW_COLUMNS):
                value: Cell
                if column.name == "outcome":
                    value = outcome.value
                elif column.name == "currency":
                    value = currency
                elif column.kind is Kind.NUMBER:
                    value = number
                elif column.kind is Kind.AMOUNT:
                    value = None if (number + at) % 5 == 0 else AMOUNTS[(number + at) % 4]
                elif column.kind is Kind.TIME:
                    value = None if (number + at) % 3 == 0 else WHEN + timedelta(days=at)
                else:
                    value = TEXTS[(number * 7 + at) % len(TEXTS)]
                cells.append(value)
            reasons = [TEXTS[number % len(TEXTS)], "amount: must be a number"]
            yield cells, reasons if outcome is RowOutcome.REJECTED else None


def _findings() -> list[FindingView]:
    opened = datetime(2026, 11, 28, 6, 40, tzinfo=UTC)
    return [
        FindingView(1, "b-same", 2, "=x", "amount_mismatch", "open", TEXTS[11], opened, opened),
        FindingView(
            2,
            "b-same",
            3,
            None,
            "status",
            "acknowledged",
            "short",
            opened,
            opened,
            "ops",
            opened,
            TEXTS[3],
        ),
    ]


def _reconciliation(path: Path) -> None:
    writer = WorkbookWriter("b-same", sandbox=True)
    for cells, reasons in _report_lines():
        writer.add_row(cells, reasons)
    writer.finish(Summary("b-same", True, [], [], [], _findings()), path)


def _validation() -> ValidationReport:
    problems = [
        Problem(row, "name", "name_present", text, f"ext-{row}{text[:20]}", text)
        for row, text in enumerate(TEXTS, start=2)
    ]
    warnings = [Problem(1, TEXTS[3], "unknown_column", "this column is not a payout field")]
    return ValidationReport("b-same", "x.csv", rows=len(TEXTS), rejects=problems, warnings=warnings)


def _assert_same_workbooks(old: Path, new: Path, parts: Sequence[str]) -> None:
    with zipfile.ZipFile(old) as was, zipfile.ZipFile(new) as now:
        for part in parts:
            assert now.read(part) == was.read(part), part
    was_book, now_book = load_workbook(old), load_workbook(new)
    assert now_book.sheetnames == was_book.sheetnames
    for name in was_book.sheetnames:
        was_sheet, now_sheet = was_book[name], now_book[name]
        assert (now_sheet.max_row, now_sheet.max_column) == (
            was_sheet.max_row,
            was_sheet.max_column,
        )
        assert now_sheet.freeze_panes == was_sheet.freeze_panes, name
        assert now_sheet.auto_filter.ref == was_sheet.auto_filter.ref, name
        assert now_sheet.print_title_rows == was_sheet.print_title_rows, name
        assert now_sheet.print_title_cols == was_sheet.print_title_cols, name
        widths = {k: d.width for k, d in was_sheet.column_dimensions.items()}
        assert {k: d.width for k, d in now_sheet.column_dimensions.items()} == widths, name
        for was_line, now_line in zip(was_sheet.iter_rows(), now_sheet.iter_rows(), strict=True):
            row = was_line[0].row
            assert now_sheet.row_dimensions[row].height == was_sheet.row_dimensions[row].height, (
                name,
                row,
            )
            if was_line[0].value == "generated_at_utc":
                continue  # when each was written: seconds apart on a busy machine
            for was, now in zip(was_line, now_line, strict=True):
                where = (name, was.coordinate)
                assert (now.value, now.data_type) == (was.value, was.data_type), where
                assert now.number_format == was.number_format, where
                # Copies: openpyxl's style proxies of two workbooks never compare equal.
                assert copy(now.font) == copy(was.font), where
                assert copy(now.fill) == copy(was.fill), where
                assert copy(now.alignment) == copy(was.alignment), where


LINE_PARTS = ("xl/worksheets/sheet3.xml", "xl/worksheets/sheet4.xml")


def test_the_reconciliation_report_is_the_one_openpyxl_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reconciliation(tmp_path / "new.xlsx")
    monkeypatch.setattr(report_workbook, "XmlRowsSheet", OpenpyxlLines)
    _reconciliation(tmp_path / "old.xlsx")
    _assert_same_workbooks(tmp_path / "old.xlsx", tmp_path / "new.xlsx", LINE_PARTS)
    rows = load_workbook(tmp_path / "new.xlsx")["rows"]
    # The lines written are the ones asked for: every outcome and currency, tall lines too.
    assert rows.max_row == 1 + len(RowOutcome) * len(CURRENCIES)
    assert any(rows.row_dimensions[r].height for r in range(2, rows.max_row + 1))
    assert not [c for line in rows.iter_rows() for c in line if c.data_type == "f"]


def test_the_rejects_workbook_is_the_one_openpyxl_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _validation()
    _, new = report_files.write_rejects_report(report, tmp_path / "new")
    monkeypatch.setattr(report_files, "XmlRowsSheet", OpenpyxlLines)
    _, old = report_files.write_rejects_report(report, tmp_path / "old")
    _assert_same_workbooks(Path(str(old)), Path(str(new)), ("xl/worksheets/sheet1.xml",))


def test_a_character_no_xlsx_can_hold_is_refused_as_openpyxl_refused_it(tmp_path: Path) -> None:
    # openpyxl's writer refused U+FFFE when it wrote the cell; the XML writer refuses it too
    # rather than write a file no spreadsheet opens.
    report = ValidationReport(
        "b-bad", "x.csv", rows=1, rejects=[Problem(2, "name", "name_present", "x", "e", "a\ufffe")]
    )
    with pytest.raises(ValueError, match="cannot hold"):
        report_files.write_rejects_report(report, tmp_path)
