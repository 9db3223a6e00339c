"""The reconciliation report of a batch, from the ledger (the source of truth)."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.connections import open_ledger
from payflow.intake import ValidationReport
from payflow.intake.report_files import write_rejects_report
from payflow.reporting import ReportPaths, write_batch_report


@task(name="write-report", cache_policy=NO_CACHE)
def write_report(ledger_url: str, batch_id: str, out_dir: str, sandbox: bool) -> ReportPaths:
    """Write the batch's reconciliation report as CSV and XLSX into `out_dir`."""
    return write_batch_report(open_ledger(ledger_url), batch_id, Path(out_dir), sandbox=sandbox)


@task(name="write-rejects", cache_policy=NO_CACHE)
def write_rejects(report: ValidationReport, out_dir: str) -> tuple[str, str]:
    """Write the rows validation rejected, with their reasons, as CSV and XLSX."""
    csv_path, xlsx_path = write_rejects_report(report, Path(out_dir))
    return str(csv_path), str(xlsx_path)
