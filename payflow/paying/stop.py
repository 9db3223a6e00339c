"""`payflow stop BATCH`'s work (the act, who may, is `payflow.acts.stop`): cancel the batch's
pay runs through Prefect and record who stopped it. Nothing of the batch is changed: every row
stays in the ledger as it is (a row the killed run left SUBMITTING is looked up at the service
by the next run before any POST), the watchdog leaves a stopped batch alone, and `payflow pay`
goes on with it.

Prefect's cancellation reaches a run only through its worker's cancellation observer, which
gives up for good after a Prefect server outage of about half a minute ("Cancellation observer
failed. Flow run cancellation disabled"), and never reaches a run with no worker (`payflow pay`
on a server). So the stop is also recorded in the ledger, and a pay run reads it before each
chunk (`stop_since`): it stops sending whether or not Prefect's cancellation reached it, and
even when Prefect could not be reached to cancel it at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
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
from payflow.ending import STOPPED
from payflow.ledger import Ledger
from payflow.ledger.actions import ActionView, last_action, record_action
from payflow.ledger.run_beats import batch_beats
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
    """The batch's runs asked to stop (their ids and names), the runs of it beating in the
    ledger (they read the stop there), and why Prefect could not be asked, if it could not."""

    runs: dict[str, str] = field(default_factory=dict)
    beating: int = 0
    prefect_trouble: str | None = None

    @property
    def recorded(self) -> bool:
        """True when there was something to stop, and the stop is in the ledger."""
        return bool(self.runs or self.beating)

    def line(self, batch_id: str) -> str:
        rows = (
            f"every row stays in the ledger: `payflow status {batch_id}` shows them, "
            f"`payflow pay {batch_id}` goes on"
        )
        if self.prefect_trouble is not None:
            if not self.beating:
                return (
                    f"batch {batch_id}: Prefect could not be reached to stop its runs "
                    f"({self.prefect_trouble}) and no pay run of it beats in the ledger: "
                    "nothing was stopped"
                )
            return (
                f"batch {batch_id}: Prefect could not be reached ({self.prefect_trouble}); the "
                f"stop is recorded in the ledger, where {counted(self.beating, 'pay run')} of it "
                f"beating {'reads' if self.beating == 1 else 'read'} it and "
                f"{'stops' if self.beating == 1 else 'stop'} sending before the next chunk; {rows}"
            )
        if not self.runs:
            return f"batch {batch_id}: no run of it on Prefect to stop"
        names = ", ".join(self.runs.values())
        return f"batch {batch_id}: {counted(len(self.runs), 'run')} cancelled ({names}); {rows}"


def stop_since(ledger: Ledger, batch_id: str, since: datetime) -> ActionView | None:
    """The stop `payflow stop` recorded for the batch after `since` (a pay run's start), or
    None: a run that reads one stops sending, whatever became of Prefect's cancellation."""
    stop = last_action(ledger, batch_id, STOPPED)
    return stop if stop is not None and stop.at >= since else None


def stop_batch(ledger: Ledger, batch_id: str, actor: str, stale_after: timedelta) -> Stopped:
    """Cancel every run tagged for the batch that is not over, and record the stop when any
    was, or when a pay run of it beats in the ledger (Prefect down: it reads the stop there)."""

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

    try:
        stopped: Stopped = run_coro_as_sync(cancel()) or Stopped()
    except Exception as exc:  # the server down: the ledger still reaches a run that beats
        stopped = Stopped(prefect_trouble=type(exc).__name__)
    now = ledger.now()
    stopped.beating = sum(1 for b in batch_beats(ledger, batch_id) if b.alive(now, stale_after))
    if stopped.recorded:
        detail = ", ".join(stopped.runs.values()) or "recorded in the ledger only"
        record_action(ledger, actor, STOPPED, batch_id, detail)
    return stopped
