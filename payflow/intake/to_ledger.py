"""Registering a validated batch in the ledger: every source row, VALIDATED or REJECTED."""

from __future__ import annotations

from payflow.intake.problems import RejectedCells, ValidationReport
from payflow.ledger import IntakeWarning, Ledger, RegisterOutcome, RejectedRow
from payflow.ledger.kept_lists import mark_unchecked
from payflow.redact import printable


def rejected_rows(report: ValidationReport) -> list[RejectedRow]:
    """The report's rejects as the ledger records them: one RejectedRow per source row."""
    ids = {p.row: p.external_id for p in report.rejects if p.external_id}
    rows: list[RejectedRow] = []
    for row, reasons in sorted(report.rejected_rows().items()):
        if row <= 1:  # row 1 is the header: file-level problems belong to no row
            continue
        cells = report.reject_cells.get(row, RejectedCells())
        rows.append(
            RejectedRow(
                row_number=row,
                external_id=ids.get(row) or None,
                reasons=reasons,
                currency=cells.currency,
                amount=cells.amount,
                payment_type=cells.payment_type,
                name=cells.name,
                requisites_masked=cells.requisites_masked,
            )
        )
    return rows


def intake_warnings(report: ValidationReport) -> list[IntakeWarning]:
    """The report's warnings as the ledger keeps them for the checker, who approves later and
    elsewhere (an amount 20 times the median was seen by the maker alone)."""
    return [
        IntakeWarning(p.row, p.external_id, printable(p.column), p.rule, printable(p.message))
        for p in report.warnings
    ]


def register_report(ledger: Ledger, report: ValidationReport) -> RegisterOutcome:
    """Record the batch once, keyed by externalId; a re-upload registers nothing new. A row
    whose bank or service could not be checked here is marked: never sent until a paying
    process has checked it."""
    outcome = ledger.register_batch(
        report.batch_id,
        report.source_name,
        report.instructions,
        rejected_rows(report),
        sheet=report.sheet,
        warnings=intake_warnings(report),
        legacy_ids=report.legacy_ids,
    )
    if report.unchecked:
        marks = {
            i.external_id: report.unchecked[i.row_number]
            for i in report.instructions
            if i.row_number in report.unchecked
        }
        mark_unchecked(ledger, report.batch_id, marks)
    return outcome
