"""`payflow stop BATCH`'s work: cancel the batch's pay runs through Prefect
(`payflow.acts.stop` records who stopped it). Nothing of the batch is changed: every row stays
in the ledger as it is (a row the killed run left SUBMITTING is looked up at the service by the
next run before any POST), the watchdog leaves a stopped batch alone, and `payflow pay` goes on
with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import StateType
from prefect.states import Cancelling
from prefect.utilities.asyncutils import run_coro_as_sync

from payflow.approvals.resume import batch_tag
from payflow.wording import counted

# A run in one of these states may still send payouts of the batch, or will.
NOT_OVER = [
    StateType.SCHEDULED,
    StateType.PENDING,
    StateType.RUNNING,
    StateType.PAUSED,
]


@dataclass
class Stopped:
    """The batch's runs asked to stop (their ids and names)."""

    runs: dict[str, str] = field(default_factory=dict)

    def line(self, batch_id: str) -> str:
        if not self.runs:
            return f"batch {batch_id}: no run of it on Prefect to stop"
        names = ", ".join(self.runs.values())
        return (
            f"batch {batch_id}: {counted(len(self.runs), 'run')} cancelled ({names}); every row "
            f"stays in the ledger: `payflow status {batch_id}` shows them, `payflow pay "
            f"{batch_id}` goes on"
        )


def stop_batch(batch_id: str, actor: str) -> Stopped:
    """Cancel every run tagged for the batch that is not over (the act that records who stopped
    it is `payflow.acts.stop.stop`)."""

    async def cancel() -> Stopped:
        stopped = Stopped()
        query = FlowRunFilter(
            tags=FlowRunFilterTags(all_=[batch_tag(batch_id)]),
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=NOT_OVER)),
        )
        async with get_client() as client:
            for run in await client.read_flow_runs(flow_run_filter=query):
                await client.set_flow_run_state(
                    UUID(str(run.id)), Cancelling(message=f"stopped by {actor}"), force=True
                )
                stopped.runs[str(run.id)] = run.name
        return stopped

    stopped: Stopped = run_coro_as_sync(cancel()) or Stopped()
    return stopped
