"""Reconciliation reports: what happened to every row of a batch, as CSV and XLSX."""

from payflow.reporting.ledger_rows import report_row, write_batch_report
from payflow.reporting.reconciliation import ReportPaths, ReportRow, write_reconciliation

__all__ = ["ReportPaths", "ReportRow", "report_row", "write_batch_report", "write_reconciliation"]
