"""Paying starts from a batch in the ledger: a deployed run pauses (in a tagged subflow) before
paying, and an approval is bound to the batch's content hash and totals."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import StateType
from prefect.flow_runs import resume_flow_run
from prefect.testing.utilities import prefect_test_harness
from support.stats import sandbox_stats

from payflow.flows.approval import BatchStopped, batch_tag
from payflow.flows.intake_batch import intake_batch
from payflow.flows.pay_batch import pay_batch
from payflow.flows.payout_batch import payout_batch
from payflow.intake import batch_id_of
from payflow.paying.binding import ApprovalVoided, approval_digest
from payflow.run_results import PayResult
from payflow.tasks.count_batch import UnknownBatch

BATCH = """externalId,amount,currency,paymentType,requisites,name,userId
{p}-1,1000,XOF,SIM,2250700000101,Kouadio Yao,u-1
{p}-2,2500,KES,SIM,254712345678,Wanjiru Kamau,u-2
"""


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=90):
        yield


@pytest.fixture
def paying_env(make_sandbox, tmp_path, monkeypatch):
    sandbox = make_sandbox()
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", sandbox.token)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAYFLOW_POLL_INTERVAL", "0.3")
    return sandbox


def _paused_run(tag: str, deadline: float):
    async def find():
        async with get_client() as client:
            paused = FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED])),
                tags=FlowRunFilterTags(all_=[tag]),
            )
            runs = await client.read_flow_runs(flow_run_filter=paused)
            return runs[0] if runs else None

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
def test_the_run_pays_only_after_approval(approve, prefect_api, paying_env, tmp_path):
    sandbox = paying_env
    path = tmp_path / "batch.csv"
    path.write_text(BATCH.format(p=f"appr-{approve}"), encoding="utf-8")

    thread, outcome = _run_in_thread(path)
    paused = _paused_run(batch_tag(batch_id_of(path.read_bytes())), time.monotonic() + 90)
    # The pause is a subflow's: the deployment's own run keeps its concurrency slot.
    assert paused.parent_task_run_id is not None
    assert sandbox_stats(sandbox)["createAttempts"] == {}, "something was sent before approval"

    resume_flow_run(paused.id, run_input={"approve": approve, "approved_by": "test"})
    thread.join(timeout=120)
    assert not thread.is_alive()

    stats = sandbox_stats(sandbox)
    if approve:
        result = outcome["result"]
        assert isinstance(result, PayResult)
        assert result.counts.statuses == {"COMPLETED": 2}
        assert len(stats["payouts"]) == 2
    else:
        assert isinstance(outcome.get("error"), BatchStopped)
        assert stats["createAttempts"] == {}


def test_a_bare_resume_without_approve_is_refused(prefect_api, paying_env, tmp_path):
    path = tmp_path / "batch.csv"
    path.write_text(BATCH.format(p="bare"), encoding="utf-8")
    thread, outcome = _run_in_thread(path)
    paused = _paused_run(batch_tag(batch_id_of(path.read_bytes())), time.monotonic() + 90)

    with pytest.raises(Exception):
        resume_flow_run(paused.id, run_input={"approved_by": "nobody"})
    assert (
        _paused_run(batch_tag(batch_id_of(path.read_bytes())), time.monotonic() + 5).id == paused.id
    )

    resume_flow_run(paused.id, run_input={"approve": False})
    thread.join(timeout=120)
    assert isinstance(outcome.get("error"), BatchStopped)
    assert sandbox_stats(paying_env)["createAttempts"] == {}


def test_an_approval_is_void_once_the_batch_totals_change(prefect_api, paying_env, tmp_path):
    sandbox = paying_env
    # Batch B registers a shared row first; batch A lists it too (ALREADY_KNOWN, still unpaid),
    # so A's totals include it until B pays it.
    first = tmp_path / "b.csv"
    first.write_text("\n".join(BATCH.format(p="shared").splitlines()[:2]) + "\n", encoding="utf-8")
    second = tmp_path / "a.csv"
    second.write_text(BATCH.format(p="shared"), encoding="utf-8")
    b = intake_batch(str(first))
    a = intake_batch(str(second))
    assert a.counts.to_send == 2
    approved = approval_digest(a.counts)

    pay_batch(b.batch_id, approved_digest=approval_digest(b.counts))
    with pytest.raises(ApprovalVoided):
        pay_batch(a.batch_id, approved_digest=approved)

    assert set(sandbox_stats(sandbox)["createAttempts"]) == {"shared-1"}, "A sent a row after all"


def test_paying_an_unknown_batch_id_sends_nothing(prefect_api, paying_env):
    with pytest.raises(UnknownBatch):
        pay_batch("no-such-batch", approved_digest="0" * 64)
    assert sandbox_stats(paying_env)["createAttempts"] == {}
