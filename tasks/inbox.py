"""Tasks of the daily run: start a batch's pay run, and move an inbox file once it is settled."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import cast

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.deployments import run_deployment
from prefect.utilities.asyncutils import run_coro_as_sync

from payflow.approvals.resume import batch_tag, crash_left_behind, pay_run_key, successor_key
from payflow.inbox import SCHEDULE_ACTOR, Settled, settle_file
from payflow.ledger.run_beats import STALE_AFTER
from payflow.paying.heartbeat import left_behind
from payflow.paying.run_end import ran_to_its_end
from payflow.runtime import open_ledger
from payflow.settings import Settings

# A pay run in one of these states is over; the ledger says what is left of its batch.
ENDED_WITHOUT_PAYING = frozenset({StateType.CRASHED, StateType.CANCELLED, StateType.FAILED})
# A pay run in one of these states lives only while its process beats in the ledger: Prefect
# keeps showing it so after its worker died, or after a resume reached nobody.
SHOWN_LIVING = frozenset({StateType.RUNNING, StateType.PAUSED})
MAX_RESTARTS = 20  # runs that ended, one after another, before the newest is returned as it is


@task(name="start-pay-run", cache_policy=NO_CACHE)
def start_pay_run(deployment: str, batch_id: str, stale_after: timedelta = STALE_AFTER) -> str:
    """Create (or find, by idempotency key) the batch's pay run on `deployment`; its id. A run
    found Running or Paused with no heartbeat for `stale_after` is crashed and replaced.

    The run is not a subflow: it waits for its own approval while the other batches go on. No
    retries here: if it cannot be made, the file stays in the inbox for the next daily run."""
    key = pay_run_key(batch_id)
    for _ in range(MAX_RESTARTS):
        # Called from a sync task: the synchronous variant runs and returns the FlowRun.
        run = cast(
            FlowRun,
            run_deployment(
                deployment,
                # The run records its end in the action log under who started it: the schedule.
                parameters={"batch_id": batch_id, "started_by": SCHEDULE_ACTOR},
                timeout=0,
                as_subflow=False,
                idempotency_key=key,
                tags=[batch_tag(batch_id)],
            ),
        )
        if run.state is None:
            return str(run.id)
        if run.state.type in SHOWN_LIVING:
            if not _nobody_behind(run, batch_id, stale_after):
                return str(run.id)  # beating, or too young to judge: never replaced
            # Its worker died (or it was resumed with nobody there): it would read Running for
            # ever, and the batch would never be paid. Crashed first, so nothing resumes it.
            run_coro_as_sync(crash_left_behind(str(run.id), LEFT_BEHIND))
        elif run.state.type not in ENDED_WITHOUT_PAYING or ran_to_its_end(run.state):
            return str(run.id)  # waiting for a worker, or it paid what it could (rerun the rest)
        # The key found a run that crashed (a killed worker) or was stopped: the file dropped
        # again did nothing, and the batch's rows stayed unpaid. A new run, keyed by the dead
        # one, resolves its SUBMITTING rows by lookup and pays the rest, never twice. The same
        # key as `payflow approve` uses for a run that died paused: one successor either way.
        key = successor_key(batch_id, str(run.id))
    return str(run.id)


LEFT_BEHIND = (
    "no heartbeat of its batch in the ledger for over a minute: its process is gone (a worker "
    "killed or restarted); the daily run started another (an answer given after that in "
    "Prefect's form reached nobody and is asked again)"
)


def _nobody_behind(run: FlowRun, batch_id: str, stale_after: timedelta) -> bool:
    """The ledger's heartbeats say no process runs this Running or Paused pay run."""
    with open_ledger(Settings()) as ledger:
        return left_behind(ledger, batch_id, run.start_time, stale_after)


@task(name="settle-inbox-file", cache_policy=NO_CACHE)
def settle_inbox_file(path: str, where: Settled, note: str | None = None) -> str:
    """Move the file to `processed/` or `failed/` (with its note); the path it now has."""
    return str(settle_file(Path(path), where, note))
