"""Resuming a pay flow run paused for approval, found by its `batch:<id>` tag on Prefect."""

from __future__ import annotations

from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import StateType
from prefect.flow_runs import aresume_flow_run


def batch_tag(batch_id: str) -> str:
    """The tag a pay flow run for `batch_id` carries."""
    return f"batch:{batch_id}"


def approval_input(approve: bool, approver: str) -> dict[str, object]:
    """The run_input sent on resume: `{"approve": bool, "approver": str}`."""
    return {"approve": approve, "approver": approver}


async def paused_runs(batch_id: str) -> list[str]:
    """Ids of the flow runs tagged for the batch that are paused now."""
    query = FlowRunFilter(
        tags=FlowRunFilterTags(all_=[batch_tag(batch_id)]),
        state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED])),
    )
    async with get_client() as client:
        runs = await client.read_flow_runs(flow_run_filter=query)
    return [str(run.id) for run in runs]


async def resume_paused_runs(batch_id: str, approve: bool, approver: str) -> list[str]:
    """Resume every paused run of the batch with the decision; the ids resumed."""
    resumed = []
    for run_id in await paused_runs(batch_id):
        await aresume_flow_run(UUID(run_id), run_input=approval_input(approve, approver))
        resumed.append(run_id)
    return resumed
