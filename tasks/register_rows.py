"""Record every row of a validated batch in the ledger before anything is paid."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.connections import open_ledger
from payflow.intake import ValidationReport
from payflow.intake.to_ledger import register_report
from payflow.ledger import RegisterOutcome


@task(name="register-rows", cache_policy=NO_CACHE)
def register_rows(report: ValidationReport, ledger_url: str, maker: str) -> RegisterOutcome:
    """VALIDATED or REJECTED per row, keyed by externalId; a re-upload registers nothing new.
    The first registration records `maker`, who can then never approve the batch."""
    ledger = open_ledger(ledger_url)
    outcome = register_report(ledger, report)
    ledger.set_maker(report.batch_id, maker)
    return outcome
