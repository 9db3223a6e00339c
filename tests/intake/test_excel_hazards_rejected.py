"""Excel's number storage ends in a reject, never in a silently changed value."""

from __future__ import annotations

from pathlib import Path

from intake_files import HEADER, ROW, with_stored_number, write_xlsx
from openpyxl import load_workbook

from payflow.intake import Problem, ValidationReport, read_batch_file
from payflow.intake.report_files import write_rejects_report
from payflow.schemas.validation import validate_rows


def test_float_artifact_amount_is_a_reject(tmp_path: Path) -> None:
    path = with_stored_number(
        write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW]), "A2", "0.30000000000000004"
    )
    report = validate_rows(read_batch_file(path), services=None, banks_for_phones=None)
    assert [(p.row, p.column, p.rule) for p in report.rejects] == [(2, "amount", "amount_decimals")]
    assert report.rejects[0].value == "0.30000000000000004"


def test_account_that_lost_digits_is_a_reject_with_its_external_id(tmp_path: Path) -> None:
    row = [*ROW[:3], 40817810899910004312.0, *ROW[4:]]
    report = validate_rows(
        read_batch_file(write_xlsx(tmp_path / "b.xlsx", [HEADER, row])),
        services=None,
        banks_for_phones=None,
    )
    # One cause, once: not also a false "requisites are required" for the cell it emptied.
    assert [(p.column, p.rule, p.external_id) for p in report.rejects] == [
        ("requisites", "number_lost_digits", "x-1")
    ]
    assert report.instructions == []


def test_report_keeps_formula_like_values_as_text(tmp_path: Path) -> None:
    problem = Problem(2, "note", "no_control_characters", "message", "x-1", "=1+1")
    report = ValidationReport("b" * 20, "batch.csv", rows=1, rejects=[problem])
    csv_path, xlsx_path = write_rejects_report(report, tmp_path / "out")
    sheet = load_workbook(xlsx_path).active
    assert sheet is not None
    # A string cell, never evaluated, shows the value as written; the CSV needs the apostrophe.
    assert sheet.cell(2, 6).value == "=1+1" and sheet.cell(2, 6).data_type == "s"
    assert csv_path.read_text("utf-8-sig").splitlines()[1] == (
        "2,x-1,note,no_control_characters,message,'=1+1,reject"
    )
