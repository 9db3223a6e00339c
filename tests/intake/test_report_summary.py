"""The validation summary stays on one screen: one line for SBP bank names resolved, the list in
the report (issue 7, item 13); control characters never reach a report or a terminal raw."""

from __future__ import annotations

import csv
from pathlib import Path

from openpyxl import load_workbook
from support.spreadsheet import print_setup

from payflow.intake import Problem, ValidationReport, batch_from_rows
from payflow.intake.lookups import BankInfo, ServiceInfo
from payflow.intake.report_files import summary_lines, write_rejects_report
from payflow.schemas.validation import validate_rows

BANKS = [BankInfo("100000000111", "Сбербанк"), BankInfo("100000000004", "Т-Банк")]
HEADER = ["amount", "currency", "paymentType", "requisites", "bankName", "name", "userId"]


def _sbp_report(rows: int) -> ValidationReport:
    body = [
        ["100", "RUB", "SBP", f"7916{n:07d}", ["Сбербанк", "т-банк"][n % 2], "A", f"u-{n}"]
        for n in range(rows)
    ]
    return validate_rows(
        batch_from_rows([HEADER, *body]),
        services=[ServiceInfo(101, "SBP", "RUB")],
        banks_for_phones=lambda phones: {p: BANKS for p in phones},
    )


def test_bank_names_resolved_are_one_summary_line_and_listed_in_the_report(
    tmp_path: Path,
) -> None:
    report = _sbp_report(300)
    assert len(report.bank_resolutions) == 300
    lines = summary_lines(report)
    resolved = [line for line in lines if "resolved" in line]
    assert resolved == [
        "  SBP bank names: 2 resolved to bank ids on 300 rows (each listed in the report)"
    ]
    assert len(lines) < 10
    csv_path, _ = write_rejects_report(report, tmp_path)
    with csv_path.open(encoding="utf-8-sig", newline="") as handle:
        listed = [r for r in csv.DictReader(handle) if r["severity"] == "resolved"]
    assert len(listed) == 300 and listed[1]["rule"] == "sbp_bank_resolved"
    assert "'т-банк' resolved to bank id 100000000004" in listed[1]["message"]
    # Each line names its row's externalId, as a reject line does (it was blank).
    by_row = {i.row_number: i.external_id for i in report.instructions}
    assert all(line["externalId"] == by_row[int(line["row"])] for line in listed)


def test_control_characters_are_shown_escaped_in_reports_and_summary(tmp_path: Path) -> None:
    problem = Problem(2, "name", "no_control_characters", "message", "x\x0b1", "a\x00\x1b[31m")
    report = ValidationReport("c" * 20, "b.csv", rows=1, rejects=[problem])
    csv_path, xlsx_path = write_rejects_report(report, tmp_path)
    sheet = load_workbook(xlsx_path).active
    assert sheet is not None
    assert (sheet.cell(2, 2).value, sheet.cell(2, 6).value) == ("x\\x0b1", "a\\x00\\x1b[31m")
    assert "\x1b" not in "".join(summary_lines(report))
    assert "x\\x0b1" in csv_path.read_text("utf-8-sig")


def test_the_rejects_workbook_prints_readably_and_shows_every_long_message(
    tmp_path: Path,
) -> None:
    # Printed for the maker who fixes the file, it ran portrait with the default widths: a
    # message ran under the value beside it and off the page, the header on page one only.
    long = "amount must be a number with at most 2 decimals, written like 1500 or 1500.50 " * 2
    problems = [
        Problem(2, "amount", "amount_format", long, external_id="x-1", value="1,5"),
        Problem(3, "currency", "currency_iso", "currency must be a code", external_id="x-2"),
    ]
    report = ValidationReport("b-print", "x.csv", rows=2, rejects=problems)
    _, xlsx_path = write_rejects_report(report, tmp_path)
    sheet = load_workbook(xlsx_path)["rejects"]
    assert print_setup(sheet) == ("landscape", True, 1, 0, "$1:$1")
    assert sheet.freeze_panes == "A2" and sheet["A1"].font.bold
    message = sheet["E2"]
    assert message.value == long and message.alignment.wrap_text
    assert sheet.row_dimensions[2].height >= 2 * 15
    assert sheet["A2"].alignment.vertical == "top"  # beside the message's first words
    assert sheet.row_dimensions[3].height is None and not sheet["E3"].alignment.wrap_text
