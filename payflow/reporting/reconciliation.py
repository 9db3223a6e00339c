"""Write a batch's reconciliation report from the ledger: `<batch_id>-reconciliation.xlsx`
and `.csv` (the rows sheet's layout), rows streamed once into both files; each report that says
something new is kept as a version beside them (`versions.keep_version`)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from payflow.ledger import Ledger, RowOutcome
from payflow.ledger.report_versions import ReportVersionView
from payflow.reconcile import FailureClasses
from payflow.reporting.layout import ROW_COLUMNS, csv_text, row_cells
from payflow.reporting.summary import Summary, build_summary
from payflow.reporting.versions import keep_version, report_digest
from payflow.reporting.workbook import WorkbookWriter
from payflow.storage import Place, Storage, storage_at


@dataclass(frozen=True, slots=True)
class ReportPaths:
    """Where the two renderings of one report were written."""

    csv: Place  # a local path, or a remote object's URL (payflow.storage)
    xlsx: Place


@dataclass(frozen=True, slots=True)
class BatchReport:
    """Where the report was written (a local path, or a remote object's URL), and the summary
    it shows."""

    csv: Place
    xlsx: Place
    summary: Summary
    version: ReportVersionView | None = None  # kept now (None: it said what the last one did)


def report_paths(out_dir: Path, batch_id: str) -> tuple[Path, Path]:
    """(csv, xlsx) paths of the batch's report in `out_dir`."""
    csv_name, xlsx_name = report_names(batch_id)
    return out_dir / csv_name, out_dir / xlsx_name


def report_names(batch_id: str) -> tuple[str, str]:
    """(csv, xlsx) names of the batch's latest report."""
    stem = f"{batch_id}-reconciliation"
    return f"{stem}.csv", f"{stem}.xlsx"


def write_batch_report(
    ledger: Ledger,
    batch_id: str,
    out_dir: Storage | Path | str,
    *,
    sandbox: bool,
    classes: FailureClasses | None = None,
    made_by: str = "payflow",
) -> BatchReport:
    """Stream the batch's rows into the CSV and the XLSX; totals come from the ledger's SQL.
    The files keep the stable names; a version is kept beside them and recorded as `made_by`'s
    when it says something the last kept version did not. `out_dir` is a folder or a storage
    URL (payflow.storage)."""
    classes = classes or FailureClasses.load()
    storage = storage_at(out_dir)
    names = report_names(batch_id)
    workbook = WorkbookWriter(batch_id, sandbox=sandbox)
    try:
        with storage.writing(*names) as (csv_part, xlsx_part):
            with csv_part.open("w", newline="", encoding="utf-8-sig") as handle:
                writer = csv.writer(handle)
                writer.writerow([column.name for column in ROW_COLUMNS])
                for line in ledger.report_lines(batch_id):
                    cells = row_cells(line, classes)
                    writer.writerow([csv_text(cell) for cell in cells])
                    reasons = (
                        json.loads(line.reasons)
                        if line.outcome is RowOutcome.REJECTED and line.reasons
                        else ([] if line.outcome is RowOutcome.REJECTED else None)
                    )
                    workbook.add_row(cells, reasons)
            summary = build_summary(ledger, batch_id, classes, sandbox=sandbox)
            workbook.finish(summary, xlsx_part)
            digest = report_digest(csv_part, summary)
    except BaseException:
        workbook.abandon()  # a CSV that failed (a full disk) left the XLSX's rows open
        raise
    version = keep_version(ledger, batch_id, storage, names, digest, summary, made_by)
    return BatchReport(storage.place(names[0]), storage.place(names[1]), summary, version)
