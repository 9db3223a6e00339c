"""Keep checking after the run: payouts still open every 30 minutes, completed ones daily.

`reconcile_pending` re-fetches batches with payouts not final or not re-fetched since a pay run
ended (the run itself reads the ledger) and refreshes their reports;
`reconcile_recent` re-fetches batches with COMPLETED payouts of the last days, so a manual
correction (which sends no webhook) becomes a finding. A run that leaves a batch with open
findings or unanswered payouts ends Failed (`NEEDS_ATTENTION`), as `payflow reconcile` exits 1,
so Prefect's view and its automations show it; `reconcile_outcomes(state)` reads either end.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact
from prefect.client.schemas.objects import State
from prefect.states import Failed

from payflow.acts.reconcile import scheduled
from payflow.connections import run_target
from payflow.expected import ExpectedFailure, quiet_expected_failures
from payflow.ledger import RowState, utc_now
from payflow.reconcile.attention import NEEDS_ATTENTION, attention_line, needing_attention
from payflow.settings import Settings
from payflow.tasks.connections import open_ledger
from payflow.tasks.reconcile_batch import ReconcileOutcome, reconcile_batch
from payflow.wording import counted

PENDING_STATES = [RowState.CREATED.value, RowState.PROCESSING.value, RowState.SUBMITTING.value]
Ended = list[ReconcileOutcome] | State[list[ReconcileOutcome]]


class FindingsOpen(ExpectedFailure):
    """A reconcile run went to its end and left batches to look at; `outcomes` is every batch's.

    The Failed state's data: Prefect raises it when a deployed run ends, so it is an exception
    (logged in one line by `quiet_expected_failures`)."""

    def __init__(self, message: str, outcomes: list[ReconcileOutcome]) -> None:
        super().__init__(message)
        self.outcomes = outcomes


def reconcile_outcomes(state: State[Any]) -> list[ReconcileOutcome]:
    """Every batch's outcome of a reconcile run called with `return_state=True`, red or not;
    re-raises what stopped it before its end."""
    done = state.result(raise_on_failure=False)
    if isinstance(done, FindingsOpen):
        return done.outcomes
    if isinstance(done, BaseException):
        raise done
    return list(done)


def _ended(outcomes: list[ReconcileOutcome]) -> Ended:
    """Completed when nothing is left to look at; else Failed with one line naming the batches,
    also the run's summary artifact (the batches' own artifacts hold the findings)."""
    batches = needing_attention(outcomes)
    line = attention_line(batches) if batches else "nothing to look at"
    checked = f"{counted(len(outcomes), 'batch')} reconciled: {line}"
    create_markdown_artifact(key="reconcile-summary", markdown=checked)
    if not batches:
        return outcomes
    return Failed(name=NEEDS_ATTENTION, message=line, data=FindingsOpen(line, outcomes))


def _reconcile_all(
    deployment: str,
    batch_ids: list[str],
    out_dir: str | None,
    api_url: str | None,
    sandbox: bool,
) -> list[ReconcileOutcome]:
    """Reconcile each batch as `deployment`'s act: its history names the schedule, no person."""
    settings = Settings()
    reports = out_dir or settings.reports_location()
    with run_target(settings, api_url, sandbox, None) as target:
        return [
            reconcile_batch(target, batch_id, reports, scheduled(deployment))
            for batch_id in batch_ids
        ]


@flow(name="reconcile-pending", persist_result=False)
def reconcile_pending(
    out_dir: str | None = None, api_url: str | None = None, sandbox: bool = False
) -> Ended:
    """Reconcile every batch that still has payouts not final, or payouts not re-fetched since
    their last news (a pay run reads webhooks and polls and leaves the re-fetch to this run),
    and refresh its report."""
    quiet_expected_failures()
    ledger = open_ledger(Settings().ledger_url_or_default())
    batch_ids = sorted({*ledger.batches_with(PENDING_STATES), *ledger.batches_not_rechecked()})
    return _ended(_reconcile_all("reconcile-pending", batch_ids, out_dir, api_url, sandbox))


@flow(name="reconcile-recent", persist_result=False)
def reconcile_recent(
    days: int | None = None,
    out_dir: str | None = None,
    api_url: str | None = None,
    sandbox: bool = False,
) -> Ended:
    """Re-fetch batches with COMPLETED payouts of the last `days`; corrections become findings."""
    quiet_expected_failures()
    settings = Settings()
    since = utc_now() - timedelta(days=days or settings.reconcile_recent_days)
    ledger = open_ledger(settings.ledger_url_or_default())
    batch_ids = ledger.batches_with([RowState.COMPLETED.value], since)
    return _ended(_reconcile_all("reconcile-recent", batch_ids, out_dir, api_url, sandbox))
