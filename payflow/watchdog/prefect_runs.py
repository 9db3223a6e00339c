"""The watchdog's view of a batch's pay runs on Prefect: which one is newest, whether it lives,
what was typed in its pause form, and starting the one resuming run.

Prefect keeps showing a run whose worker died Running (or Paused) for ever; the ledger's
heartbeats say whether a process is behind it (`paying.heartbeat.left_behind`). An answer sent
through the form of such a run set it Running and reached nobody: it is still in Prefect's run
input, read here so the watchdog can record it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowFilter,
    FlowFilterName,
    FlowRunFilter,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.client.schemas.sorting import FlowRunSort
from prefect.utilities.asyncutils import run_coro_as_sync

from payflow.approvals.resume import batch_tag, crash_with_parents, waiting_subflows
from payflow.ledger import Ledger
from payflow.paying.heartbeat import left_behind
from payflow.paying.keyed_runs import SHOWN_LIVING, keyed_pay_run
from payflow.paying.run_end import NOT_ALL_PAID
from payflow.watchdog.watch import WATCHDOG_ACTOR

PAY_FLOW = "pay-batch"
WATCHDOG_FLOW = "watchdog"
# Prefect stores a pause's answer under "<state name>-<pause key>-response" (prefect.input).
ANSWER_PREFIX = "paused-"
ANSWER_SUFFIX = "-response"
FINAL_TYPES = frozenset(
    {StateType.COMPLETED, StateType.FAILED, StateType.CRASHED, StateType.CANCELLED}
)


@dataclass(frozen=True, slots=True)
class LatestRun:
    """The batch's newest top-level pay run on Prefect."""

    run_id: str
    name: str
    state: StateType | None
    state_name: str
    message: str
    start_time: Any  # an aware datetime, or None before it started
    resumes: int = 0  # runs of the batch the watchdog started (started_by "watchdog")

    @property
    def shown_living(self) -> bool:
        return self.state in SHOWN_LIVING

    @property
    def crashed(self) -> bool:
        return self.state is StateType.CRASHED

    @property
    def cancelled(self) -> bool:
        return self.state in (StateType.CANCELLED, StateType.CANCELLING)

    @property
    def failed(self) -> bool:
        # "Not all paid" ran to its end: what is left is unconfirmed (followed) or needs a rerun.
        return self.state is StateType.FAILED and self.state_name != NOT_ALL_PAID

    @property
    def final(self) -> bool:
        return self.state in FINAL_TYPES


@dataclass(frozen=True, slots=True)
class WatchdogOnSchedule:
    """A deployment of the watchdog flow whose schedule is on: it looks every `every` (None:
    a cron schedule, no fixed period)."""

    name: str
    every: timedelta | None


def watchdog_on_schedule() -> WatchdogOnSchedule | None:
    """The watchdog's deployment on this Prefect server with an active schedule, or None
    (none deployed, paused, or its schedules off): then nothing resumes a dead run by itself."""

    async def read() -> list[Any]:
        async with get_client() as client:
            return await client.read_deployments(
                flow_filter=FlowFilter(name=FlowFilterName(any_=[WATCHDOG_FLOW]))
            )

    found: list[Any] = run_coro_as_sync(read()) or []
    for deployment in found:
        active = [s for s in deployment.schedules if s.active]
        if deployment.paused or not active:
            continue
        periods = [s.schedule.interval for s in active if hasattr(s.schedule, "interval")]
        return WatchdogOnSchedule(
            f"{WATCHDOG_FLOW}/{deployment.name}", min(periods) if periods else None
        )
    return None


class PrefectRuns:
    """`watch.Runs` on the Prefect server of PREFECT_API_URL; resuming runs are started on
    `deployment` along the batch's key chain (`paying.keyed_runs`)."""

    def __init__(self, ledger: Ledger, deployment: str, stale_after: timedelta) -> None:
        self._ledger = ledger
        self._deployment = deployment
        self._stale_after = stale_after

    def latest(self, batch_id: str) -> LatestRun | None:
        return latest_pay_run(batch_id)

    def answers(self, run_id: str) -> list[dict[str, Any]]:
        return form_answers(run_id)

    def crash(self, run_id: str, why: str) -> list[str]:
        return crash(run_id, why)

    def start(self, batch_id: str) -> str:
        run = keyed_pay_run(
            self._deployment,
            batch_id,
            WATCHDOG_ACTOR,  # the run records its end under who started it
            nobody_behind=lambda found: left_behind(
                self._ledger, batch_id, found.start_time, self._stale_after
            ),
            left_behind_why=f"no heartbeat of batch {batch_id}: its process is gone",
            after_its_end=True,
        )
        return str(run.id)


def latest_pay_run(batch_id: str) -> LatestRun | None:
    """The batch's newest pay-batch run (tag `batch:<id>`), or None when it never had one. A
    subflow counts (the one-batch deployment's `payout-batch` runs pay-batch inside it): its
    parent dies with it, and `crash` marks both."""

    async def read() -> list[FlowRun]:
        async with get_client() as client:
            return await client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=[PAY_FLOW])),
                flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[batch_tag(batch_id)])),
                sort=FlowRunSort.EXPECTED_START_TIME_DESC,
                limit=20,
            )

    runs: list[FlowRun] = run_coro_as_sync(read()) or []
    if not runs:
        return None
    newest = max(runs, key=lambda r: str(r.created or r.expected_start_time or ""))
    state = newest.state
    return LatestRun(
        str(newest.id),
        newest.name,
        state.type if state else None,
        state.name if state and state.name else "",
        (state.message or "") if state else "",
        newest.start_time,
        sum(1 for r in runs if (r.parameters or {}).get("started_by") == WATCHDOG_ACTOR),
    )


def form_answers(run_id: str) -> list[dict[str, Any]]:
    """Answers typed into the pause forms of the run and its subflows still waiting (the
    approval pause), oldest first; what a dead run never read."""

    async def read() -> list[dict[str, Any]]:
        async with get_client() as client:
            run = await client.read_flow_run(UUID(run_id))
            answers: list[dict[str, Any]] = []
            for waiting in [run, *await waiting_subflows(client, run)]:
                inputs = await client.filter_flow_run_input(
                    waiting.id, key_prefix=ANSWER_PREFIX, limit=100, exclude_keys=set()
                )
                for found in sorted(inputs, key=lambda i: i.created or 0):
                    if found.key.endswith(ANSWER_SUFFIX):
                        value = json.loads(found.value)
                        if isinstance(value, dict):
                            answers.append(value)
            return answers

    return list(run_coro_as_sync(read()) or [])


def crash(run_id: str, why: str) -> list[str]:
    """Mark the run, its subflows still waiting and the runs above it still shown living
    Crashed with `why`; the parents so marked ("payout-batch run calm-owl")."""
    return list(run_coro_as_sync(crash_with_parents(run_id, why)) or [])
