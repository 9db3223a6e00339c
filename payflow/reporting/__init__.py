"""Reconciliation reports: the batch's rows, summary, findings and balance as XLSX and CSV."""

from payflow.reporting.layout import LAYOUT_VERSION, ROW_COLUMNS
from payflow.reporting.markdown import (
    failures_table,
    findings_table,
    settlement_lines,
    summary_markdown,
)
from payflow.reporting.reconciliation import (
    BatchReport,
    ReportPaths,
    report_paths,
    write_batch_report,
)
from payflow.reporting.summary import Summary, build_summary

__all__ = [
    "LAYOUT_VERSION",
    "ROW_COLUMNS",
    "BatchReport",
    "ReportPaths",
    "Summary",
    "build_summary",
    "failures_table",
    "findings_table",
    "report_paths",
    "settlement_lines",
    "summary_markdown",
    "write_batch_report",
]
