"""The `one-batch` deployment (concurrency limit 1) waits for approval past five minutes on a
real Prefect server (on PostgreSQL) and worker, keeps its slot, and pays after the resume.

Prefect 3.8.8 released the slot of a *top-level* paused run, let a second run start, and ended
both CRASHED about four minutes later. The pause now lives in a subflow. This test takes seven
to ten minutes by design: it is alone in its file and marked slow, so that pytest-xdist starts it
first, on a worker of its own, and runs the others beside it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterParentFlowRunId,
    FlowRunFilterTags,
)
from prefect.deployments import run_deployment
from prefect.flow_runs import resume_flow_run
from prefect.settings import PREFECT_API_URL, temporary_settings
from support.operators import actor, add_people
from support.prefect import prefect_server_on_postgres
from support.servers import start_group, stop_group
from support.stats import sandbox_stats
from support.tracking import TRACK_QUIET_PERIOD

from payflow.acts import submit
from payflow.acts.auth import issue_code
from payflow.flows.approval import batch_tag
from payflow.flows.payout_batch import payout_batch
from payflow.intake import batch_id_of
from payflow.ledger import Ledger

REPO = Path(__file__).resolve().parents[2]
PAUSED_LONGER_THAN = 330.0  # seconds: past the ~4 minutes after which the old layout crashed
# No setting shortens this wait without changing what it proves. The slot is a lease, and the
# server's PREFECT_SERVER_CONCURRENCY_INITIAL_DEPLOYMENT_LEASE_DURATION only covers the time until
# the run's engine starts: the engine renews the lease at once, then every 225 s, each time for a
# fixed 300 s (prefect 3.8.8, flow_engine: maintain_concurrency_lease(lease_id, 300)). A layout
# that stops renewing during the pause loses the slot about 300 s after its last renewal,
# whatever the server's setting, so the pause has to last longer than that.
POOL = "long-pause"
# Above the shipped approval rules' limits (XOF 1,000,000, KES 130,000): one approval step.
BATCH = """externalId,amount,currency,paymentType,requisites,name,userId
{p}-1,2000000,XOF,SIM,225070000010{d},Kouadio Yao {d},u-1-{d}
{p}-2,200000,KES,SIM,25471234567{d},Wanjiru Kamau {d},u-2-{d}
"""  # {d}: another recipient per batch, so the second batch holds no repeat of the first

# Each wait's limit, for a loaded machine: CI once gave up after 180 s waiting for the second
# run's pause. Seen on a loaded machine: a worker 80 s without polling after the first run ended
# (its websocket to the server had timed out), then a flow process 30 s importing before it began.
START_TIMEOUT = 360.0
# Above the sum of the waits (4 x START_TIMEOUT + the pause), so a slow step fails with its own
# message, not a kill.
pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory: pytest.TempPathFactory):
    # A server of its own on PostgreSQL, not Prefect's harness on SQLite: during the pause the
    # waiting run is resubmitted again and again, and one resubmission met SQLite's "database is
    # locked" (a 503) on a loaded machine; the worker then reported the waiting run CRASHED.
    root = tmp_path_factory.mktemp("long-pause-prefect")
    with prefect_server_on_postgres(root) as url, temporary_settings({PREFECT_API_URL: url}):
        yield url


async def _deploy() -> None:
    async with get_client() as client:
        await client.create_work_pool(WorkPoolCreate(name=POOL, type="process"))
        flow_id = await client.create_flow(payout_batch)
        await client.create_deployment(
            flow_id=flow_id,
            name="one-batch",
            work_pool_name=POOL,
            path=str(REPO),
            entrypoint="flows/payout_batch.py:payout_batch",
            parameter_openapi_schema=payout_batch.parameters.model_dump(),
            concurrency_limit=1,
        )


def _state(run_id: UUID) -> str:
    async def read() -> str:
        async with get_client() as client:
            run = await client.read_flow_run(run_id)
            return run.state.type.value if run.state else "NONE"

    return asyncio.run(read())


def _paused_child(tag: str) -> UUID | None:
    async def find() -> UUID | None:
        async with get_client() as client:
            runs = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[tag]))
            )
            paused = [r for r in runs if r.state and r.state.type.value == "PAUSED"]
            return paused[0].id if paused else None

    return asyncio.run(find())


def _children_of(run_id: UUID) -> list[str]:
    async def read() -> list[str]:
        async with get_client() as client:
            runs = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(
                    parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[run_id])
                )
            )
            return [r.state.type.value for r in runs if r.state]

    return asyncio.run(read())


def _answer_with_a_code(tmp_path: Path, tag: str) -> dict[str, object]:
    """The form's answer of a checker: the batch (a file of the worker's own account, so no
    signed-in maker) is submitted by a maker first, then the checker's one-time code."""
    batch_id = tag.removeprefix("batch:")
    with Ledger.open(f"sqlite:///{(tmp_path / 'home' / 'ledger.sqlite3').resolve()}") as ledger:
        add_people(ledger, mia="maker", bob="checker")
        submit(ledger, batch_id, actor(ledger, "mia"))
        return {
            "approve": True,
            "approval_code": issue_code(ledger, batch_id, actor(ledger, "bob")),
        }


def _wait_for(condition, what: str, timeout: float = START_TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_a_pause_past_five_minutes_keeps_the_slot_and_pays_after_resume(
    prefect_api, make_sandbox, tmp_path
):
    sandbox = make_sandbox()
    asyncio.run(_deploy())
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text(BATCH.format(p="long-1", d=1), encoding="utf-8")
    second.write_text(BATCH.format(p="long-2", d=2), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env.update(
        PREFECT_API_URL=prefect_api,
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_WORKER_QUERY_SECONDS="1",
        PREFECT_WORKER_PREFETCH_SECONDS="1",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_HOME=str(tmp_path / "home"),
        PAYFLOW_POLL_INTERVAL="0.3",
        PAYFLOW_TRACK_QUIET_PERIOD=TRACK_QUIET_PERIOD,  # why: support.tracking
    )
    worker_log = tmp_path / "worker.log"
    worker = start_group(
        [sys.executable, "-m", "prefect", "worker", "start", "--pool", POOL, "--type", "process"],
        env,
        worker_log,
        cwd=REPO,
    )
    try:
        one = run_deployment("payout-batch/one-batch", parameters={"path": str(first)}, timeout=0)
        two = run_deployment("payout-batch/one-batch", parameters={"path": str(second)}, timeout=0)
        tags = {
            one.id: batch_tag(batch_id_of(first.read_bytes())),
            two.id: batch_tag(batch_id_of(second.read_bytes())),
        }

        def first_pause() -> tuple[UUID, UUID] | None:
            # Either run may get the slot: the worker submits both at once.
            for run_id, tag in tags.items():
                child = _paused_child(tag)
                if child is not None:
                    return run_id, child
            return None

        holder, paused = _wait_for(first_pause, "a run's approval pause")
        waiter = two.id if holder == one.id else one.id

        paused_at = time.monotonic()
        while time.monotonic() - paused_at < PAUSED_LONGER_THAN:
            # Checked all along: the waiting run keeps its slot and nothing crashes.
            assert _state(holder) == "RUNNING"
            assert _state(paused) == "PAUSED"
            assert _state(waiter) not in ("RUNNING", "CRASHED", "FAILED")
            assert sandbox_stats(sandbox.url)["createAttempts"] == {}
            time.sleep(5)

        resume_flow_run(paused, run_input=_answer_with_a_code(tmp_path, tags[holder]))
        _wait_for(lambda: _state(holder) == "COMPLETED", "the first run to complete")
        # Only now does the other run get the slot; it pauses for its own approval.
        paused_two = _wait_for(lambda: _paused_child(tags[waiter]), "the second run's pause")
        resume_flow_run(paused_two, run_input=_answer_with_a_code(tmp_path, tags[waiter]))
        _wait_for(lambda: _state(waiter) == "COMPLETED", "the second run to complete")
    finally:
        stop_group(worker)
        # pytest shows captured output only when the test fails: then the worker's story is there.
        print(worker_log.read_text(encoding="utf-8", errors="replace")[-20_000:])

    assert "CRASHED" not in _children_of(one.id) + _children_of(two.id)
    stats = sandbox_stats(sandbox.url)
    assert stats["payoutsByExternalId"] == dict.fromkeys(
        ["long-1-1", "long-1-2", "long-2-1", "long-2-2"], 1
    )
