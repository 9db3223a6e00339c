"""The rejects report of a validated batch, as CSV and XLSX, and its short text summary."""

from __future__ import annotations

import csv
from pathlib import Path

from openpyxl import Workbook

from payflow.atomic import abandon_workbook, save_workbook
from payflow.inert import inert_row
from payflow.intake.problems import Problem, ValidationReport
from payflow.redact import printable
from payflow.reporting.cell_styles import CellStyles
from payflow.reporting.headings import header_row
from payflow.reporting.printing import lines_needed
from payflow.reporting.xml_rows import XmlRowsSheet
from payflow.storage import Place, Storage, storage_at
from payflow.wording import counted

REPORT_COLUMNS = ("row", "externalId", "column", "rule", "message", "value", "severity")
# Printed for the maker who fixes the file: landscape, the header on every page, a message
# wrapped in its column (it ran under the value beside it, and off the page).
REPORT_WIDTHS = (6.0, 24.0, 14.0, 24.0, 60.0, 24.0, 10.0)
WRAPPED = {at: REPORT_WIDTHS[at] for at in (1, 4, 5)}  # externalId, message, value
SHOWN_PROBLEMS = 40


def _records(report: ValidationReport) -> list[list[str | int]]:
    def record(problem: Problem, severity: str) -> list[str | int]:
        return [
            problem.row,
            printable(problem.external_id),
            printable(problem.column),
            problem.rule,
            printable(problem.message),
            printable(problem.value),
            severity,
        ]

    rows = [record(p, "reject") for p in report.rejects]
    rows += [record(p, "warning") for p in report.warnings]
    rows += [record(p, "resolved") for p in resolution_problems(report)]
    rows.sort(key=lambda r: int(r[0]))
    return rows


def resolution_problems(report: ValidationReport) -> list[Problem]:
    """Each SBP bank name resolved to an id, as a report line of severity `resolved`."""
    if not report.bank_resolutions:
        return []  # no instruction built: a 100,000-row file's took a tenth of a second
    # A resolved row is valid: its externalId (given or derived) is its instruction's.
    ids = {i.row_number: i.external_id for i in report.instructions}
    return [
        Problem(
            r.row,
            "bankName",
            "sbp_bank_resolved",
            f"bank name {r.given!r} resolved to bank id {r.bank_id}",
            external_id=ids.get(r.row, ""),
            value=r.given,
        )
        for r in report.bank_resolutions
    ]


def write_rejects_report(
    report: ValidationReport, out_dir: Storage | Path | str
) -> tuple[Place, Place]:
    """Write `<batch_id>-rejects.csv` and `.xlsx` under `out_dir` (a folder or a storage URL);
    values are already masked. Their places."""
    storage = storage_at(out_dir)
    records = _records(report)
    names = rejects_names(report.batch_id)
    with storage.writing(*names) as (csv_part, xlsx_part):
        with csv_part.open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(REPORT_COLUMNS)
            writer.writerows(inert_row(record) for record in records)
        workbook = Workbook(write_only=True)
        try:
            # A line per problem, of any number: written as XML (`xml_rows`), not openpyxl cells.
            sheet = XmlRowsSheet(workbook, "rejects", CellStyles())
            header_row(sheet, REPORT_COLUMNS, REPORT_WIDTHS, ("row",))
            for record in records:
                lines = max(lines_needed(str(record[at]), w) for at, w in WRAPPED.items())
                sheet.append_tall(record, lines)
        except BaseException:
            abandon_workbook(workbook)  # its lines' temporary file, closed now
            raise
        save_workbook(workbook, xlsx_part)
    return storage.place(names[0]), storage.place(names[1])


def rejects_names(batch_id: str) -> tuple[str, str]:
    """(csv, xlsx) names of a batch's rejects report."""
    return f"{batch_id}-rejects.csv", f"{batch_id}-rejects.xlsx"


def summary_lines(report: ValidationReport) -> list[str]:
    """A readable summary: counts, bank names resolved, the first problems, unchecked rules."""
    lines = [
        f"batch {report.batch_id} ({report.source_name}): {counted(report.rows, 'row')}, "
        f"{report.valid} valid, {report.rejected} rejected, "
        f"{counted(len(report.warnings), 'warning')}"
    ]
    if report.bank_resolutions:
        names = len({r.given for r in report.bank_resolutions})
        lines.append(
            f"  SBP bank names: {names} resolved to bank ids on "
            f"{counted(len(report.bank_resolutions), 'row')} (each listed in the report)"
        )
    problems = [("reject", p) for p in report.rejects] + [("warning", p) for p in report.warnings]
    problems.sort(key=lambda item: item[1].row)
    for severity, problem in problems[:SHOWN_PROBLEMS]:
        value = f" [{problem.value}]" if problem.value else ""
        column = f"{problem.column}, " if problem.column else ""  # about the whole file
        lines.append(
            printable(
                f"  {severity} row {problem.row}, {column}{problem.rule}: {problem.message}{value}"
            )
        )
    if len(problems) > SHOWN_PROBLEMS:
        lines.append(f"  ... and {len(problems) - SHOWN_PROBLEMS} more in the report")
    lines += [f"  not checked: {note}" for note in report.not_checked]
    return lines
