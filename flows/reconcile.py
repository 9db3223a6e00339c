"""Keep checking after the run: payouts still open every 30 minutes, completed ones daily.

`reconcile_pending` re-fetches batches with payouts not final and refreshes their reports;
`reconcile_recent` re-fetches batches with COMPLETED payouts of the last days, so a manual
correction (which sends no webhook) becomes a finding.
"""

from __future__ import annotations

from datetime import timedelta

from prefect import flow

from payflow.connections import run_target
from payflow.ledger import RowState, utc_now
from payflow.settings import Settings
from payflow.tasks.connections import open_ledger
from payflow.tasks.reconcile_batch import ReconcileOutcome, reconcile_batch

PENDING_STATES = [RowState.CREATED.value, RowState.PROCESSING.value, RowState.SUBMITTING.value]


def _reconcile_all(
    batch_ids: list[str], out_dir: str | None, api_url: str | None, sandbox: bool
) -> list[ReconcileOutcome]:
    settings = Settings()
    reports = out_dir or str(settings.reports_dir())
    with run_target(settings, api_url, sandbox, None) as target:
        return [reconcile_batch(target, batch_id, reports) for batch_id in batch_ids]


@flow(name="reconcile-pending", persist_result=False)
def reconcile_pending(
    out_dir: str | None = None, api_url: str | None = None, sandbox: bool = False
) -> list[ReconcileOutcome]:
    """Reconcile every batch that still has payouts not final, and refresh its report."""
    ledger = open_ledger(Settings().ledger_url_or_default())
    return _reconcile_all(ledger.batches_with(PENDING_STATES), out_dir, api_url, sandbox)


@flow(name="reconcile-recent", persist_result=False)
def reconcile_recent(
    days: int | None = None,
    out_dir: str | None = None,
    api_url: str | None = None,
    sandbox: bool = False,
) -> list[ReconcileOutcome]:
    """Re-fetch batches with COMPLETED payouts of the last `days`; corrections become findings."""
    settings = Settings()
    since = utc_now() - timedelta(days=days or settings.reconcile_recent_days)
    ledger = open_ledger(settings.ledger_url_or_default())
    batch_ids = ledger.batches_with([RowState.COMPLETED.value], since)
    return _reconcile_all(batch_ids, out_dir, api_url, sandbox)
