"""Tasks of the daily run: start a batch's pay run, and move an inbox file once it is settled."""

from __future__ import annotations

from datetime import timedelta

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import FlowRun

from payflow.inbox import SCHEDULE_ACTOR, Settled, settle
from payflow.paying.heartbeat import left_behind
from payflow.paying.keyed_runs import keyed_pay_run
from payflow.runtime import open_ledger
from payflow.settings import Settings
from payflow.storage import storage_at


@task(name="start-pay-run", cache_policy=NO_CACHE)
def start_pay_run(deployment: str, batch_id: str, stale_after: timedelta | None = None) -> str:
    """Create (or find, by idempotency key) the batch's pay run on `deployment`; its id. A run
    found Running or Paused with no heartbeat for `stale_after` (None: the settings'
    `run_stale_window`) is crashed and replaced.

    The run is not a subflow: it waits for its own approval while the other batches go on. No
    retries here: if it cannot be made, the file stays in the inbox for the next daily run."""
    window = stale_after or Settings().run_stale_window
    run = keyed_pay_run(
        deployment,
        batch_id,
        # The run records its end in the action log under who started it: the schedule.
        SCHEDULE_ACTOR,
        nobody_behind=lambda found: _nobody_behind(found, batch_id, window),
        left_behind_why=LEFT_BEHIND,
    )
    return str(run.id)


LEFT_BEHIND = (
    "no heartbeat of its batch in the ledger for longer than PAYFLOW_RUN_STALE_AFTER (a "
    "minute unless set): its process is gone (a worker "
    "killed or restarted); the daily run started another (an answer given after that in "
    "Prefect's form reached nobody and is asked again)"
)


def _nobody_behind(run: FlowRun, batch_id: str, stale_after: timedelta) -> bool:
    """The ledger's heartbeats say no process runs this Running or Paused pay run."""
    with open_ledger(Settings()) as ledger:
        return left_behind(ledger, batch_id, run.start_time, stale_after)


@task(name="settle-inbox-file", cache_policy=NO_CACHE)
def settle_inbox_file(inbox: str, name: str, where: Settled, note: str | None = None) -> str:
    """Move the file `name` of the inbox (a folder or a storage URL) to `processed/` or
    `failed/` (with its note); where it now is."""
    return str(settle(storage_at(inbox), name, where, note))
