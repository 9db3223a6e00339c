"""Reconciliation reports: the batch's rows, summary, findings and balance as XLSX and CSV.

The names below load on first use: the intake's rejects report imports this package's small
modules (cell styles, printing), and `payflow validate` would otherwise import the ledger,
SQLAlchemy and the reconciliation (about 0.5 s) through `layout` to write it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from payflow.lazy_names import names_loader

if TYPE_CHECKING:
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

_HOMES = {
    "LAYOUT_VERSION": "layout",
    "ROW_COLUMNS": "layout",
    "BatchReport": "reconciliation",
    "ReportPaths": "reconciliation",
    "Summary": "summary",
    "build_summary": "summary",
    "failures_table": "markdown",
    "findings_table": "markdown",
    "report_paths": "reconciliation",
    "settlement_lines": "markdown",
    "summary_markdown": "markdown",
    "write_batch_report": "reconciliation",
}

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


__getattr__ = names_loader(__name__, _HOMES)
