"""Excel's number storage ends in a reject, never in a silently changed value."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from intake_files import HEADER, ROW, with_cached_errors, with_stored_number, write_xlsx
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


def test_a_number_its_format_shows_otherwise_is_a_reject(tmp_path: Path) -> None:
    # Found by hand: 1500 typed into a percent-formatted amount column holds 15 and shows
    # 1500%, and an amount of 1500.6 under `#,##0` shows 1501; both were paid as they were held.
    rows: list[list[object]] = [HEADER]
    rows += [[amount, *ROW[1:-1], f"x-{n}"] for n, amount in enumerate([15, 1500.6, 1505], 1)]
    path = write_xlsx(tmp_path / "b.xlsx", rows)
    workbook = load_workbook(path)
    sheet = workbook.active
    assert sheet is not None
    sheet["A2"].number_format = "0%"
    sheet["A3"].number_format = "#,##0"
    sheet["A4"].number_format = "#,##0.00"  # shows what it holds
    sheet["D2"].number_format = "0"  # a phone stored as a number, shown whole: as it holds
    workbook.save(path)
    report = validate_rows(read_batch_file(path), services=None, banks_for_phones=None)
    assert [i.external_id for i in report.instructions] == ["x-3"]
    assert [(p.row, p.column, p.rule, p.external_id) for p in report.rejects] == [
        (2, "amount", "number_shown_otherwise", "x-1"),
        (3, "amount", "number_shown_otherwise", "x-2"),
    ]
    assert report.rejects[0].message.startswith("amount shows 1500% but the cell holds 15:")
    assert report.rejects[1].message.startswith("amount shows 1501 but the cell holds 1500.6:")


def test_a_phone_its_format_shows_otherwise_is_masked_in_the_message(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, [*ROW[:3], 2250700001234, *ROW[4:]]])
    workbook = load_workbook(path)
    sheet = workbook.active
    assert sheet is not None
    sheet["D2"].number_format = "0%"
    workbook.save(path)
    report = validate_rows(read_batch_file(path), services=None, banks_for_phones=None)
    [problem] = report.rejects
    assert problem.rule == "number_shown_otherwise" and "2250700001234" not in problem.message


def test_a_date_in_a_payout_column_is_a_reject_and_a_note_may_hold_one(tmp_path: Path) -> None:
    # Found by hand: an externalId typed 5.1 and a userId typed 1-2, which a spreadsheet keeps
    # as dates, were sent as 2026-01-05T00:00:00 and 2026-01-02T00:00:00: a later file with the
    # id typed as text would have paid the row again under another id.
    header = [*HEADER, "note", "paid on"]
    first = [*ROW[:5], dt.datetime(2026, 1, 2), dt.datetime(2026, 1, 5), "x", dt.date(2026, 1, 1)]
    second = [*ROW[:5], dt.time(12, 30), "x-2", dt.date(2024, 1, 31), dt.date(2026, 1, 1)]
    third = [*ROW[:5], "u-3", "x-3", dt.date(2024, 1, 31), dt.date(2026, 1, 1)]
    path = write_xlsx(tmp_path / "b.xlsx", [header, first, second, third])
    report = validate_rows(read_batch_file(path), services=None, banks_for_phones=None)
    assert [(p.row, p.column, p.rule) for p in report.rejects] == [
        (2, "userId", "date_cell"),
        (2, "externalId", "date_cell"),
        (3, "userId", "date_cell"),
    ]
    assert report.rejects[2].message.startswith("userId holds the date or time 12:30:00, not")
    assert [i.external_id for i in report.instructions] == ["x-3"]


def test_a_formula_error_in_a_payout_column_is_a_reject(tmp_path: Path) -> None:
    # Found by hand: a name and a userId filled by a VLOOKUP that found nothing were paid as
    # '#N/A', and a name of '#DIV/0!' too; an error in a column payflow does not read is ignored.
    header = [*HEADER, "look"]
    rows = [
        [*ROW[:4], "=NA()", "=NA()", "x-1", "=1/0"],
        [*ROW[:4], "=1/0", "u-2", "x-2", "=NA()"],
        ["=1/0", *ROW[1:5], "u-3", "x-3", ""],
        [*ROW[:5], "u-4", "x-4", "=NA()"],
    ]
    path = write_xlsx(tmp_path / "b.xlsx", [header, *rows])
    # openpyxl saves no results: store the ones a spreadsheet program would have.
    with_cached_errors(path, {"=NA()": "#N/A", "=1/0": "#DIV/0!"})
    report = validate_rows(read_batch_file(path), services=None, banks_for_phones=None)
    assert [(p.row, p.column, p.rule) for p in report.rejects] == [
        (2, "name", "formula_error"),
        (2, "userId", "formula_error"),
        (3, "name", "formula_error"),
        (4, "amount", "formula_error"),
    ]
    assert report.rejects[0].message.startswith("name shows the error #N/A: the formula")
    assert [i.external_id for i in report.instructions] == ["x-4"]
