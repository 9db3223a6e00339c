"""No report cell that came from input is ever a live formula (issue 7, item 3).

Values that a spreadsheet reads as a formula or a control sequence (`=`, `+`, `-`, `@`, tab, CR)
are written with a leading apostrophe in the CSV and as typed text cells in the XLSX, in the
rejects report and in the reconciliation report.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from openpyxl import load_workbook

from payflow.intake import Problem, ValidationReport
from payflow.intake.report_files import write_rejects_report

HOSTILE = ['=HYPERLINK("http://x","click")', "+1", "-1", "@x", "\tx", "\rx", "=1+1"]


def _assert_inert_text(value: object, hostile: str, *, xlsx: bool = False) -> None:
    # XML turns a bare CR into LF when the workbook is read back; the apostrophe stays first.
    expected = "'" + (hostile.replace("\r", "\n") if xlsx else hostile)
    # Control characters are shown escaped in the rejects report (`\t` as the two characters
    # backslash and t), which is inert as it stands.
    escaped = hostile.encode("unicode_escape").decode("ascii")
    assert value in (expected, escaped)
    assert not str(value).startswith(("=", "+", "-", "@", "\t", "\r", "\n"))


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
    _assert_inert_text(warning["column"], hostile)
    _assert_inert_text(reject["externalId"], hostile)
    _assert_inert_text(reject["value"], hostile)

    sheet = load_workbook(xlsx_path).active
    assert sheet is not None
    cells = [cell for row in sheet.iter_rows(min_row=2) for cell in row]
    assert not any(cell.data_type == "f" for cell in cells)
    header = [cell.value for cell in sheet[1]]
    warning_cells, reject_cells = (
        dict(zip(header, row, strict=True)) for row in sheet.iter_rows(min_row=2)
    )
    for cell in (warning_cells["column"], reject_cells["externalId"], reject_cells["value"]):
        assert cell.data_type == "s"
        _assert_inert_text(cell.value, hostile, xlsx=True)
    texts = [cell.value for cell in cells if cell.data_type == "s"]
    assert not any(str(v).startswith(("=", "+", "-", "@", "\t", "\r", "\n")) for v in texts)
