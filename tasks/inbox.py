"""Tasks of the daily run: start a batch's pay run, and move an inbox file once it is settled."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.deployments import run_deployment

from payflow.approvals.resume import batch_tag, pay_run_key, successor_key
from payflow.inbox import SCHEDULE_ACTOR, Settled, settle_file
from payflow.paying.run_end import ran_to_its_end

# A pay run in one of these states is over; the ledger says what is left of its batch.
ENDED_WITHOUT_PAYING = frozenset({StateType.CRASHED, StateType.CANCELLED, StateType.FAILED})
MAX_RESTARTS = 20  # runs that ended, one after another, before the newest is returned as it is


@task(name="start-pay-run", cache_policy=NO_CACHE)
def start_pay_run(deployment: str, batch_id: str) -> str:
    """Create (or find, by idempotency key) the batch's pay run on `deployment`; its id.

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
        if run.state is None or run.state.type not in ENDED_WITHOUT_PAYING:
            return str(run.id)
        if ran_to_its_end(run.state):
            return str(run.id)  # it paid what it could; what is left needs a person (rerun)
        # The key found a run that crashed (a killed worker) or was stopped: the file dropped
        # again did nothing, and the batch's rows stayed unpaid. A new run, keyed by the dead
        # one, resolves its SUBMITTING rows by lookup and pays the rest, never twice. The same
        # key as `payflow approve` uses for a run that died paused: one successor either way.
        key = successor_key(batch_id, str(run.id))
    return str(run.id)


@task(name="settle-inbox-file", cache_policy=NO_CACHE)
def settle_inbox_file(path: str, where: Settled, note: str | None = None) -> str:
    """Move the file to `processed/` or `failed/` (with its note); the path it now has."""
    return str(settle_file(Path(path), where, note))
