"""The reconciliation report of a batch, built from the ledger (the source of truth)."""

from __future__ import annotations

from pathlib import Path

from payflow.ledger import Disposition, Ledger, RowView
from payflow.redact import mask_requisites
from payflow.reporting.reconciliation import ReportPaths, ReportRow, write_reconciliation


def report_row(view: RowView, batch_id: str) -> ReportRow:
    """One ledger row as the report shows it, requisites masked (invariant 6)."""
    details = list(view.reasons)
    if view.disposition == Disposition.ALREADY_KNOWN and view.first_batch_id != batch_id:
        details.insert(0, f"already registered by batch {view.first_batch_id}: not paid again")
    if view.corrected:
        details.append("final status corrected by the platform after completion")
    return ReportRow(
        row=view.row_number,
        external_id=view.external_id or "",
        state=str(view.state),
        amount=view.amount,
        currency=view.currency or "",
        payment_type=view.payment_type or "",
        requisites_masked=mask_requisites(view.requisites),
        payout_id=view.payout_id or "",
        status_message=view.status_message or "",
        corrected=view.corrected,
        detail="; ".join(details),
    )


def write_batch_report(
    ledger: Ledger, batch_id: str, out_dir: Path, *, sandbox: bool
) -> ReportPaths:
    """Write the batch's reconciliation report as CSV and XLSX into `out_dir`."""
    rows = (report_row(view, batch_id) for view in ledger.batch_rows(batch_id))
    counts = ledger.batch_summary(batch_id)
    return write_reconciliation(out_dir, batch_id, rows, counts, sandbox=sandbox)
