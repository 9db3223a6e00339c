"""The rejects report of a batch: the rows validation refused, with their reasons."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.intake import ValidationReport
from payflow.intake.report_files import write_rejects_report


@task(name="write-rejects", cache_policy=NO_CACHE)
def write_rejects(report: ValidationReport, out_dir: str) -> tuple[str, str]:
    """Write the rows validation rejected, with their reasons, as CSV and XLSX into `out_dir` (a
    folder or a storage URL)."""
    csv_path, xlsx_path = write_rejects_report(report, out_dir)
    return str(csv_path), str(xlsx_path)
