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


def approval_input(
    approve: bool, approver: str, acknowledge_warnings: bool | None = None
) -> dict[str, object]:
    """The run_input sent on resume: `{"approve": bool, "approver": str}`, plus
    `"acknowledge_warnings"` when the batch has warnings (the form then asks for it)."""
    answer: dict[str, object] = {"approve": approve, "approver": approver}
    if acknowledge_warnings is not None:
        answer["acknowledge_warnings"] = acknowledge_warnings
    return answer


async def paused_runs(batch_id: str) -> list[str]:
    """Ids of the flow runs tagged for the batch that are paused now."""
    query = FlowRunFilter(
        tags=FlowRunFilterTags(all_=[batch_tag(batch_id)]),
        state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED])),
    )
    async with get_client() as client:
        runs = await client.read_flow_runs(flow_run_filter=query)
    return [str(run.id) for run in runs]


async def resume_paused_runs(
    batch_id: str, approve: bool, approver: str, acknowledge_warnings: bool | None = None
) -> list[str]:
    """Resume every paused run of the batch with the decision; the ids resumed."""
    answer = approval_input(approve, approver, acknowledge_warnings)
    resumed = []
    for run_id in await paused_runs(batch_id):
        await aresume_flow_run(UUID(run_id), run_input=answer)
        resumed.append(run_id)
    return resumed
