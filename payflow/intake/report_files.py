"""The rejects report of a validated batch, as CSV and XLSX, and its short text summary."""

from __future__ import annotations

import csv
from pathlib import Path

from openpyxl import Workbook

from payflow.intake.problems import Problem, ValidationReport
from payflow.reporting.inert import inert_row, text_cells

REPORT_COLUMNS = ("row", "externalId", "column", "rule", "message", "value", "severity")
SHOWN_PROBLEMS = 40


def _records(report: ValidationReport) -> list[list[str | int]]:
    def record(problem: Problem, severity: str) -> list[str | int]:
        return [
            problem.row,
            problem.external_id,
            problem.column,
            problem.rule,
            problem.message,
            problem.value,
            severity,
        ]

    rows = [record(p, "reject") for p in report.rejects]
    rows += [record(p, "warning") for p in report.warnings]
    rows.sort(key=lambda r: int(r[0]))
    return rows


def write_rejects_report(report: ValidationReport, out_dir: Path) -> tuple[Path, Path]:
    """Write `<batch_id>-rejects.csv` and `.xlsx` under `out_dir`; values are already masked."""
    out_dir.mkdir(parents=True, exist_ok=True)
    records = _records(report)
    csv_path = out_dir / f"{report.batch_id}-rejects.csv"
    with csv_path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(REPORT_COLUMNS)
        writer.writerows(inert_row(record) for record in records)
    xlsx_path = out_dir / f"{report.batch_id}-rejects.xlsx"
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None  # a new workbook always has one sheet
    sheet.title = "rejects"
    sheet.append(list(REPORT_COLUMNS))
    for record in records:
        sheet.append(text_cells(sheet, record))
    workbook.save(xlsx_path)
    return csv_path, xlsx_path


def summary_lines(report: ValidationReport) -> list[str]:
    """A readable summary: counts, bank names resolved, the first problems, unchecked rules."""
    lines = [
        f"batch {report.batch_id} ({report.source_name}): {report.rows} rows, "
        f"{report.valid} valid, {report.rejected} rejected, {len(report.warnings)} warnings"
    ]
    for resolution in report.bank_resolutions:
        lines.append(
            f"  row {resolution.row}: bank {resolution.given!r} resolved to id {resolution.bank_id}"
        )
    problems = [("reject", p) for p in report.rejects] + [("warning", p) for p in report.warnings]
    problems.sort(key=lambda item: item[1].row)
    for severity, problem in problems[:SHOWN_PROBLEMS]:
        value = f" [{problem.value}]" if problem.value else ""
        lines.append(
            f"  {severity} row {problem.row}, {problem.column}, {problem.rule}: "
            f"{problem.message}{value}"
        )
    if len(problems) > SHOWN_PROBLEMS:
        lines.append(f"  ... and {len(problems) - SHOWN_PROBLEMS} more in the report")
    lines += [f"  not checked: {note}" for note in report.not_checked]
    return lines
