"""A deployed payout-batch run pauses before paying and goes on only with an operator's input."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
)
from prefect.client.schemas.objects import StateType
from prefect.flow_runs import resume_flow_run
from prefect.testing.utilities import prefect_test_harness

from flows.payout_batch import BatchResult, BatchStopped, payout_batch

BATCH = """externalId,amount,currency,paymentType,requisites,name,userId
{p}-1,1000,XOF,SIM,2250700000101,Kouadio Yao,u-1
{p}-2,2500,KES,SIM,254712345678,Wanjiru Kamau,u-2
"""


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=90):
        yield


def _paused_run_id(deadline: float) -> str:
    async def find() -> str | None:
        async with get_client() as client:
            paused = FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))
            )
            runs = await client.read_flow_runs(flow_run_filter=paused)
            return str(runs[0].id) if runs else None

    while time.monotonic() < deadline:
        found = asyncio.run(find())
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("the run never paused for approval")


def _run_in_thread(path: Path) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["result"] = payout_batch(path=str(path), approved=False)
        except BaseException as exc:  # the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("approve", [True, False])
def test_the_run_pays_only_after_approval(
    approve, prefect_api, make_sandbox, tmp_path, monkeypatch
):
    sandbox = make_sandbox()
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", sandbox.token)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAYFLOW_POLL_INTERVAL", "0.3")
    path = tmp_path / "batch.csv"
    path.write_text(BATCH.format(p=f"appr-{approve}"), encoding="utf-8")

    thread, outcome = _run_in_thread(path)
    run_id = _paused_run_id(time.monotonic() + 90)
    stats = httpx.get(f"{sandbox.url}/_sandbox/stats").json()
    assert stats["createAttempts"] == {}, "something was sent before approval"

    resume_flow_run(run_id, run_input={"approve": approve, "approved_by": "test"})
    thread.join(timeout=120)
    assert not thread.is_alive()

    stats = httpx.get(f"{sandbox.url}/_sandbox/stats").json()
    if approve:
        result = outcome["result"]
        assert isinstance(result, BatchResult)
        assert result.statuses == {"COMPLETED": 2}
        assert len(stats["payouts"]) == 2
    else:
        assert isinstance(outcome.get("error"), BatchStopped)
        assert stats["createAttempts"] == {}
