"""Resuming a pay flow run paused for approval, found by its `batch:<id>` tag on Prefect.

A paused run lives in the process that paused it: when its worker stops (a restart, a kill),
the run still reads Paused, and a resume sets it Running with nobody to go on. So every resume
is confirmed (the paused subflow completes within `WENT_ON_WITHIN_SECONDS`). A run that does
not go on is marked Crashed with its parents still Running, and an approved batch gets a new
run of the deployment that started it, keyed by the dead run (`successor_key`): the daily run
finding the dead run by its key gets that same successor. The daily run marks a run it finds
with nobody behind it Crashed the same way (`crash_left_behind`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from uuid import UUID

from prefect.client.orchestration import PrefectClient, get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterParentFlowRunId,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.exceptions import NotPausedError
from prefect.flow_runs import aresume_flow_run
from prefect.states import Crashed

# The paused subflow checks for its resume every `PAUSE_POLL_SECONDS`; a live one has ended
# well within this (a loaded machine included), a dead one never does.
PAUSE_POLL_SECONDS = 2
WENT_ON_WITHIN_SECONDS = 30.0
_STILL_WAITING = frozenset({StateType.PAUSED, StateType.RUNNING})


def batch_tag(batch_id: str) -> str:
    """The tag a pay flow run for `batch_id` carries."""
    return f"batch:{batch_id}"


def pay_run_key(batch_id: str) -> str:
    """The idempotency key of a batch's pay run: asking again returns the run already made."""
    return f"pay-batch:{batch_id}"


def successor_key(batch_id: str, dead_run_id: str) -> str:
    """The idempotency key of the run that replaces a dead pay run of the batch."""
    return f"{pay_run_key(batch_id)}:after:{dead_run_id}"


@dataclass(frozen=True)
class Replaced:
    """A paused run whose process had stopped: `stalled` and the run on top of it, `dead`, are
    Crashed, and `started` is the new run in its place (None: nothing pays it yet)."""

    stalled: str
    dead: str
    started: str | None


@dataclass
class Resumed:
    """What a resume did: runs that went on with the answer, and runs found dead instead."""

    went_on: list[str] = field(default_factory=list)
    replaced: list[Replaced] = field(default_factory=list)


def approval_input(approve: bool, acknowledge_warnings: bool | None = None) -> dict[str, object]:
    """The run_input sent on resume after `payflow approve` recorded the decision:
    `{"approve": bool}`, plus `"acknowledge_warnings"` when the form asks for it. It carries no
    code: the decision is in the ledger already, and the run reads it from there."""
    answer: dict[str, object] = {"approve": approve}
    if acknowledge_warnings is not None:
        answer["acknowledge_warnings"] = acknowledge_warnings
    return answer


async def paused_runs(batch_id: str) -> list[str]:
    """Ids of the flow runs tagged for the batch that are paused now."""
    return [str(run.id) for run in await _paused(batch_id)]


async def _paused(batch_id: str) -> list[FlowRun]:
    query = FlowRunFilter(
        tags=FlowRunFilterTags(all_=[batch_tag(batch_id)]),
        state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED])),
    )
    async with get_client() as client:
        return await client.read_flow_runs(flow_run_filter=query)


def asks_acknowledgement(run: FlowRun) -> bool:
    """True when the paused run's form asks for `acknowledge_warnings`: the `await-approval`
    subflow's `warnings` parameter, fixed when it paused. The server refuses an answer with a
    field its form lacks, or without one it has, so the answer follows the form, not the
    batch's warnings now (a warning can appear, or go, after the pause)."""
    return bool((run.parameters or {}).get("warnings"))


async def resume_paused_runs(
    batch_id: str,
    approve: bool,
    approver: str,
    acknowledge_warnings: bool = False,
) -> Resumed:
    """Resume every paused run of the batch with the decision and confirm each went on; a run
    whose process had stopped is replaced (approved) or only marked Crashed (declined).
    `acknowledge_warnings` goes to each run whose form asks for it (`asks_acknowledgement`)."""
    asked = []
    for run in await _paused(batch_id):
        warned = acknowledge_warnings if asks_acknowledgement(run) else None
        # NotPausedError: another approver resumed it a moment ago; confirmed below all the same.
        with suppress(NotPausedError):
            await aresume_flow_run(run.id, run_input=approval_input(approve, warned))
        asked.append(str(run.id))
    result = Resumed()
    async with get_client() as client:
        for run_id in await _not_gone_on(client, asked, WENT_ON_WITHIN_SECONDS):
            result.replaced.append(await _replace(client, batch_id, run_id, approve, approver))
    stalled = {replaced.stalled for replaced in result.replaced}
    result.went_on = [run_id for run_id in asked if run_id not in stalled]
    return result


async def resume_once_paused(
    batch_id: str,
    run_id: str,
    approver: str,
    acknowledge_warnings: bool,
    within: float,
    gone_on: Callable[[], bool],
) -> Resumed:
    """Resume the batch's run paused for approval as soon as one pauses, while the pay run
    `run_id` still runs, `gone_on()` (rows of the batch sent) is False and `within` seconds have
    not passed; what was resumed (nothing: it went on by itself, or ended).

    A run that read the ledger just before the approval was recorded pauses a moment later:
    found Running by its key, it would otherwise wait paused for an answer already given."""
    deadline = time.monotonic() + within
    while True:
        resumed = await resume_paused_runs(batch_id, True, approver, acknowledge_warnings)
        if resumed.went_on or resumed.replaced:
            return resumed
        async with get_client() as client:
            run = await client.read_flow_run(UUID(run_id))
        running = run.state is not None and run.state.type is StateType.RUNNING
        if not running or gone_on() or time.monotonic() >= deadline:
            return resumed
        await asyncio.sleep(0.5)


async def _not_gone_on(client: PrefectClient, run_ids: list[str], within: float) -> list[str]:
    """The paused subflows that did not complete `within` seconds after their resume: still
    Paused or Running (nobody there), or ended otherwise (a process orphaned by its worker
    crashed as it went on)."""
    deadline = time.monotonic() + within
    waiting, ended_badly = list(run_ids), []
    while waiting:
        runs = [await client.read_flow_run(UUID(run_id)) for run_id in waiting]
        ended_badly += [
            str(r.id)
            for r in runs
            if r.state is not None and r.state.is_final() and not r.state.is_completed()
        ]
        waiting = [str(r.id) for r in runs if r.state is None or r.state.type in _STILL_WAITING]
        if not waiting or time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.5)
    return ended_badly + waiting


async def _replace(
    client: PrefectClient, batch_id: str, run_id: str, approve: bool, approver: str
) -> Replaced:
    """Mark the stalled run and its parents Crashed; if approved, start the top run's deployment
    again with the same parameters (its approval is in the ledger, so it pays without a pause)."""
    chain = await _with_parents(client, await client.read_flow_run(UUID(run_id)))
    why = (
        f"its process stopped while it waited for approval (a worker restart?); "
        f"{'approved' if approve else 'declined'} by {approver} after that"
    )
    await _crash_waiting(client, chain, why)
    top = chain[-1]
    if not approve or top.deployment_id is None:
        return Replaced(run_id, str(top.id), None)
    new = await client.create_flow_run_from_deployment(
        top.deployment_id,
        parameters=dict(top.parameters),
        idempotency_key=successor_key(batch_id, str(top.id)),
        tags=list(top.tags),
    )
    return Replaced(run_id, str(top.id), str(new.id))


async def crash_left_behind(run_id: str, why: str) -> None:
    """Mark a pay run with no process behind it Crashed, and its subflows still waiting (the
    approval pause), so that nothing resumes them."""
    async with get_client() as client:
        run = await client.read_flow_run(UUID(run_id))
        await _crash_waiting(client, [run, *await waiting_subflows(client, run)], why)


async def crash_with_parents(run_id: str, why: str) -> list[str]:
    """`crash_left_behind`, and the flow runs above it still Running or Paused (a one-batch
    run's `payout-batch` parent lives in the same process: it died with it); the parents
    crashed, as "<flow> run <name>" for a line."""
    async with get_client() as client:
        run = await client.read_flow_run(UUID(run_id))
        await _crash_waiting(client, [run, *await waiting_subflows(client, run)], why)
        above = (await _with_parents(client, run))[1:]
        parents = [p for p in above if p.state is not None and p.state.type in _STILL_WAITING]
        await _crash_waiting(client, parents, why)
        return [f"{(await client.read_flow(p.flow_id)).name} run {p.name}" for p in parents]


async def _crash_waiting(client: PrefectClient, runs: list[FlowRun], why: str) -> None:
    """Set each run still Paused or Running Crashed with `why`."""
    for run in runs:
        if run.state is not None and run.state.type in _STILL_WAITING:
            # Forced: the run's own engine is gone, so no rule would ever see it end; forcing
            # also releases the deployment's concurrency slot the dead run held.
            await client.set_flow_run_state(run.id, Crashed(message=why), force=True)


async def waiting_subflows(client: PrefectClient, run: FlowRun) -> list[FlowRun]:
    """The run's subflows, and theirs, that are still Paused or Running."""
    found: list[FlowRun] = []
    parents = [run.id]
    while parents:
        query = FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=parents),
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=list(_STILL_WAITING))),
        )
        children = await client.read_flow_runs(flow_run_filter=query)
        found += children
        parents = [child.id for child in children]
    return found


async def _with_parents(client: PrefectClient, run: FlowRun) -> list[FlowRun]:
    """The run, then the flow run of each parent task up to the top run."""
    chain = [run]
    while chain[-1].parent_task_run_id is not None:
        parent_task = await client.read_task_run(chain[-1].parent_task_run_id)
        if parent_task.flow_run_id is None:
            break
        chain.append(await client.read_flow_run(parent_task.flow_run_id))
    return chain
