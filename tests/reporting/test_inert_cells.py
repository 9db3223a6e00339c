"""No report cell that came from input is ever a live formula (issue 7, item 3).

Values that a spreadsheet reads as a formula or a control sequence (`=`, `+`, `-`, `@`, tab, CR)
are written with a leading apostrophe in the CSV, which has no cell types, and as typed string
cells in the XLSX, which need no apostrophe: the operator reads the value as the input had it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from openpyxl import load_workbook
from support.spreadsheet import computed_sheets

from payflow.intake import Problem, ValidationReport
from payflow.intake.report_files import write_rejects_report

HOSTILE = ['=HYPERLINK("http://x","click")', "+1", "-1", "@x", "\tx", "\rx", "=1+1"]
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\n")


def _escaped(hostile: str) -> str:
    # Control characters are shown escaped in the rejects report (`\t` as the two characters
    # backslash and t), which is inert as it stands.
    return hostile.encode("unicode_escape").decode("ascii")


def _assert_inert_csv_text(value: str, hostile: str) -> None:
    assert value in ("'" + hostile, _escaped(hostile))
    assert not value.startswith(TRIGGERS)


def _rejects(hostile: str) -> ValidationReport:
    problem = Problem(2, "name", "name_present", "a name is required", hostile, hostile)
    unknown = Problem(1, hostile, "unknown_column", "this column is not a payout field")
    return ValidationReport(
        batch_id="b-inert", source_name="x.csv", rows=1, rejects=[problem], warnings=[unknown]
    )


@pytest.mark.parametrize("hostile", HOSTILE)
def test_rejects_report_cells_are_inert(tmp_path: Path, hostile: str) -> None:
    csv_path, xlsx_path = write_rejects_report(_rejects(hostile), tmp_path)

    with csv_path.open(encoding="utf-8-sig", newline="") as handle:
        lines = list(csv.DictReader(handle))
    warning, reject = lines  # sorted by row: the file-level warning (row 1) first
    _assert_inert_csv_text(warning["column"], hostile)
    _assert_inert_csv_text(reject["externalId"], hostile)
    _assert_inert_csv_text(reject["value"], hostile)

    sheet = load_workbook(xlsx_path).active
    assert sheet is not None
    cells = [cell for row in sheet.iter_rows(min_row=2) for cell in row]
    assert not any(cell.data_type == "f" for cell in cells)
    header = [cell.value for cell in sheet[1]]
    warning_cells, reject_cells = (
        dict(zip(header, row, strict=True)) for row in sheet.iter_rows(min_row=2)
    )
    for cell in (warning_cells["column"], reject_cells["externalId"], reject_cells["value"]):
        # A string cell, as the input had it: no apostrophe in front of `=HYPERLINK(` or `-1`.
        assert cell.data_type == "s"
        assert cell.value in (hostile, _escaped(hostile))


def test_a_spreadsheet_shows_formula_like_input_as_written_not_computed(tmp_path: Path) -> None:
    values = ['=HYPERLINK("http://x","click")', "=1+1", "-5", "+1", "@SUM(1,2)", "#N/A"]
    problems = [
        Problem(row, "name", "name_present", "a name is required", f"ext-{row}", value)
        for row, value in enumerate(values, start=2)
    ]
    report = ValidationReport("b-as-written", "x.csv", rows=len(values), rejects=problems)
    _, xlsx_path = write_rejects_report(report, tmp_path)

    sheet = load_workbook(xlsx_path)["rejects"]
    column = [cell.value for cell in sheet[1]].index("value")
    cells = [row[column] for row in sheet.iter_rows(min_row=2)]
    assert [(cell.value, cell.data_type) for cell in cells] == [(v, "s") for v in values]
    shown = computed_sheets(xlsx_path, tmp_path / "opened")["rejects"]
    # A formula would show its result: "click", 2, or an error.
    assert [line[column] for line in shown[1:]] == values
