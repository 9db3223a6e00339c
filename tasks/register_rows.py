"""Record every row of a validated batch in the ledger before anything is paid."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.intake import ValidationReport
from payflow.ledger import RegisterOutcome, RejectedRow
from tasks.connections import open_ledger


def rejected_rows(report: ValidationReport) -> list[RejectedRow]:
    """The report's rejects as the ledger records them: one RejectedRow per source row."""
    ids = {p.row: p.external_id for p in report.rejects if p.external_id}
    return [
        RejectedRow(row_number=row, external_id=ids.get(row) or None, reasons=reasons)
        for row, reasons in sorted(report.rejected_rows().items())
        if row > 1  # row 1 is the header: file-level problems belong to no row
    ]


@task(name="register-rows", cache_policy=NO_CACHE)
def register_rows(report: ValidationReport, ledger_url: str) -> RegisterOutcome:
    """VALIDATED or REJECTED per row, keyed by externalId; a re-upload registers nothing new."""
    ledger = open_ledger(ledger_url)
    return ledger.register_batch(
        report.batch_id, report.source_name, report.instructions, rejected_rows(report)
    )
