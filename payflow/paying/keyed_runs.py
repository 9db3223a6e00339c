"""A batch's one pay run on a deployment, found or made by its idempotency key.

The daily run and the console ask for a batch's pay run by the same key (`pay_run_key`), so
neither starts a second run beside the other's. A run found crashed or stopped, or shown living
with nobody behind it (then marked Crashed, so nothing resumes it), gives way to one new run
keyed by it (`successor_key`): the key `payflow approve` uses for a run that died paused, so a
dead run has one successor whoever asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from prefect.client.schemas.objects import FlowRun, StateType
from prefect.deployments import run_deployment
from prefect.utilities.asyncutils import run_coro_as_sync

from payflow.approvals.resume import batch_tag, crash_left_behind, pay_run_key, successor_key
from payflow.paying.run_end import ran_to_its_end

# A pay run in one of these states is over; the ledger says what is left of its batch.
ENDED_WITHOUT_PAYING = frozenset({StateType.CRASHED, StateType.CANCELLED, StateType.FAILED})
# A pay run in one of these states lives only while its process beats in the ledger: Prefect
# keeps showing it so after its worker died, or after a resume reached nobody.
SHOWN_LIVING = frozenset({StateType.RUNNING, StateType.PAUSED})
MAX_RESTARTS = 20  # runs that ended, one after another, before the newest is returned as it is


def keyed_pay_run(
    deployment: str,
    batch_id: str,
    started_by: str,
    *,
    nobody_behind: Callable[[FlowRun], bool],
    left_behind_why: str,
    after_its_end: bool = False,
) -> FlowRun:
    """The batch's pay run on `deployment`, along its key chain: made when there is none yet, the
    run found when it lives or waits for a worker, else the next one. A run that ran to its end
    (paid what it could) is returned as it is, unless `after_its_end` (going on with what it
    left). A run shown living that `nobody_behind` judges dead is marked Crashed with
    `left_behind_why` first."""
    key = pay_run_key(batch_id)
    for _ in range(MAX_RESTARTS):
        # Called from sync code: the synchronous variant runs and returns the FlowRun.
        run = cast(
            FlowRun,
            run_deployment(
                deployment,
                # The run records its end in the action log under who started it.
                parameters={"batch_id": batch_id, "started_by": started_by},
                timeout=0,
                as_subflow=False,
                idempotency_key=key,
                tags=[batch_tag(batch_id)],
            ),
        )
        if run.state is None:
            return run
        if run.state.type in SHOWN_LIVING:
            if not nobody_behind(run):
                return run  # beating, or too young to judge: never replaced
            # Its worker died (or it was resumed with nobody there): it would read Running for
            # ever, and the batch would never be paid. Crashed first, so nothing resumes it.
            run_coro_as_sync(crash_left_behind(str(run.id), left_behind_why))
        elif not run.state.is_final():
            return run  # waiting for a worker: it reads the ledger when it starts
        elif not after_its_end and (
            run.state.type not in ENDED_WITHOUT_PAYING or ran_to_its_end(run.state)
        ):
            return run  # it paid what it could: what is left needs a person (a rerun)
        # A run that crashed (a killed worker) or was stopped left the batch's rows unpaid. A
        # new run, keyed by the dead one, resolves its SUBMITTING rows by lookup and pays the
        # rest, never twice.
        key = successor_key(batch_id, str(run.id))
    return run
