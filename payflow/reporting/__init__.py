"""Reconciliation reports: what happened to every row of a batch, as CSV and XLSX."""

from payflow.reporting.reconciliation import ReportPaths, ReportRow, write_reconciliation

__all__ = ["ReportPaths", "ReportRow", "write_reconciliation"]
