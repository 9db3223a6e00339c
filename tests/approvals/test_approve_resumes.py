"""`payflow approve` records the decision and resumes the batch's paused run on a real Prefect
server (a small flow that pauses like the pay subflow: tag `batch:<id>`, the same input model)."""

from __future__ import annotations

import asyncio
import threading
import time
from decimal import Decimal

import pytest
from paying_support import register, row
from prefect import flow, tags
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.testing.utilities import prefect_test_harness

from payflow.approvals import Approved, Declined, Pending, approval_status, load_policy
from payflow.approvals.decide import decide
from payflow.approvals.resume import batch_tag, paused_runs
from payflow.ledger import Ledger
from payflow.settings import Settings

POLICY = """
currencies:
  "*":
    bands:
      - {up_to: "1000", steps: 0}
      - {up_to: "100000", steps: 1}
      - {steps: 2}
"""


class PayApproval(RunInput):
    """The input the pay subflow waits for (no default for approve)."""

    approve: bool
    approver: str


@flow(name="pauses-for-approval", persist_result=False)
def pauses_for_approval(batch_id: str) -> dict[str, object]:
    answer = pause_flow_run(wait_for_input=PayApproval, timeout=120, key=f"approve-{batch_id}")
    return {"approve": answer.approve, "approver": answer.approver}


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=90):
        yield


@pytest.fixture
def settings(tmp_path, ledger_url):
    path = tmp_path / "approvals.yaml"
    path.write_text(POLICY, encoding="utf-8")
    return Settings(ledger_url=ledger_url, home=tmp_path / "home", approvals_file=path)


def start_paused_run(batch_id: str) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def target() -> None:
        with tags(batch_tag(batch_id)):
            outcome["result"] = pauses_for_approval(batch_id)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    deadline = time.monotonic() + 90
    while not asyncio.run(paused_runs(batch_id)):
        assert time.monotonic() < deadline, "the run never paused"
        time.sleep(0.2)
    return thread, outcome


def batch_of(ledger: Ledger, prefix: str, amount: int) -> str:
    batch_id = register(ledger, [row(f"{prefix}-2", 2, amount=Decimal(amount))])
    ledger.set_maker(batch_id, "alice")
    return batch_id


def test_approve_resumes_the_paused_run_once_every_step_is_given(prefect_api, ledger, settings):
    batch_id = batch_of(ledger, "res", 200000)  # two steps
    thread, outcome = start_paused_run(batch_id)
    [run_id] = asyncio.run(paused_runs(batch_id))

    first = decide(settings.model_copy(update={"approver": "bob"}), ledger, batch_id)
    assert first.status == Pending(1, ("bob",)) and first.resumed == []
    assert asyncio.run(paused_runs(batch_id)) == [run_id]  # still waiting for the second person

    second = decide(settings.model_copy(update={"approver": "carol"}), ledger, batch_id)

    assert second.status == Approved(("bob", "carol")) and second.resumed == [run_id]
    thread.join(timeout=60)
    assert outcome["result"] == {"approve": True, "approver": "carol"}
    assert [r.approver for r in ledger.approvals_of(batch_id)] == ["bob", "carol"]


def test_a_decline_resumes_the_run_with_approve_false(prefect_api, ledger, settings):
    batch_id = batch_of(ledger, "dec", 5000)
    thread, outcome = start_paused_run(batch_id)

    done = decide(
        settings.model_copy(update={"approver": "bob"}), ledger, batch_id, decline=True, note="no"
    )

    assert done.status == Declined("bob", "no") and len(done.resumed) == 1
    thread.join(timeout=60)
    assert outcome["result"] == {"approve": False, "approver": "bob"}
    assert approval_status(ledger, batch_id, load_policy(settings.approvals_file)) == Declined(
        "bob", "no"
    )
