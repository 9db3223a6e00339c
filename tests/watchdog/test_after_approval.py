"""The watchdog's Prefect side on a real Prefect server (no worker: runs are made through the
API as a dead worker leaves them).

`payflow approve` of a batch whose pay run died (issue 38, item 2) resumes the batch as the
watchdog does (the dead run Crashed, one resuming run under the lease `resume:<batch>`), or,
when the run is too young to call dead, says when the watchdog will, or that none is deployed.
It never says "nothing is paying it yet" while a run is there. A one-batch run's dead
`payout-batch` parent is marked Crashed with its pay-batch subflow, and the line says so."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from uuid import UUID

import pytest
from paying_support import register, row
from prefect import flow, task
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from prefect.client.schemas.schedules import IntervalSchedule
from prefect.states import Running
from support.beats import at_past, dead_run_id
from support.operators import actor, add_people, sign_in_at
from support.prefect import backdate_run

from payflow.acts import submit
from payflow.approvals.resume import batch_tag, pay_run_key
from payflow.ledger import Ledger
from payflow.ledger.leases import take_lease
from payflow.ledger.run_beats import beat
from payflow.watchdog.answers import record_form_answer
from payflow.watchdog.prefect_runs import PrefectRuns, watchdog_on_schedule
from payflow.watchdog.watch import Verdict, watch_batch

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def ledger(tmp_path: Path):
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as opened:
        add_people(opened, mia="maker", bob="checker")
        yield opened


def submitted(ledger: Ledger, prefix: str) -> str:
    """A batch of one approval step (the shipped policy, XOF over 1,000,000) mia submitted."""
    big = Decimal(600_000)
    batch_id = register(
        ledger, [row(f"{prefix}-1", 2, amount=big), row(f"{prefix}-2", 3, amount=big)]
    )
    submit(ledger, batch_id, actor(ledger, "mia"))
    return batch_id


async def _pay_run(batch_id: str) -> str:
    """A run of the `pay-batch` deployment for the batch, keyed as the daily run keys it,
    shown Running with no worker behind it."""
    async with get_client() as client:
        flow_id = await client.create_flow_from_name("pay-batch")
        deployment_id = await client.create_deployment(
            flow_id=flow_id, name="pay-batch", entrypoint="flows/pay_batch.py:pay_batch"
        )
        run = await client.create_flow_run_from_deployment(
            deployment_id,
            parameters={"batch_id": batch_id, "started_by": "daily"},
            tags=[batch_tag(batch_id)],
            idempotency_key=pay_run_key(batch_id),
        )
        await client.set_flow_run_state(run.id, Running(), force=True)
        return str(run.id)


def pay_run(batch_id: str) -> str:
    return asyncio.run(_pay_run(batch_id))


def runs_of(batch_id: str) -> dict[str, str]:
    """Every flow run tagged for the batch: id -> state type."""

    async def read() -> dict[str, str]:
        async with get_client() as client:
            found = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[batch_tag(batch_id)]))
            )
            return {str(r.id): r.state.type.value if r.state else "" for r in found}

    return asyncio.run(read())


def approve(ledger: Ledger, batch_id: str, prefect_api: str, tmp_path: Path) -> list[str]:
    """`payflow approve BATCH` as bob, signed in; its lines."""
    home = tmp_path / "home-bob"
    sign_in_at(ledger.url, "bob", home)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env.update(
        PAYFLOW_LEDGER_URL=ledger.url,
        PAYFLOW_HOME=str(home),
        PREFECT_API_URL=prefect_api,
        PREFECT_HOME=str(tmp_path / "prefect-home"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "payflow", "approve", batch_id],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout.splitlines()


def test_approving_a_batch_whose_run_died_resumes_it_as_the_watchdog_does(
    prefect_api, ledger, tmp_path
):
    batch_id = submitted(ledger, "ap-dead")
    dead = pay_run(batch_id)
    backdate_run(prefect_api, dead, 300)  # started five minutes ago
    # Its worker was killed two minutes ago, mid-wait: its beat never ended.
    beat(at_past(ledger, 120), dead_run_id(), batch_id, "flow run paused")

    lines = approve(ledger, batch_id, prefect_api, tmp_path)

    runs = runs_of(batch_id)
    assert runs.pop(dead) == "CRASHED", lines
    [(successor, state)] = runs.items()
    assert state == "SCHEDULED"  # no worker in this test: it waits for one
    assert lines[-1] == (
        f"its pay run died (2 rows unsent); resumed in run {successor}, started here as the "
        "watchdog would (one run, under its lease)"
    )
    assert not any("nothing is paying it yet" in line for line in lines)
    # Its lease is held: a watchdog looking now starts no second run.
    assert not take_lease(ledger, f"resume:{batch_id}", "another-watchdog", timedelta(minutes=1))


def test_a_run_too_young_to_call_dead_is_left_to_the_watchdog_and_the_line_says_when(
    prefect_api, ledger, tmp_path
):
    lonely = submitted(ledger, "ap-young")
    young = pay_run(lonely)
    assert watchdog_on_schedule() is None

    lines = approve(ledger, lonely, prefect_api, tmp_path)

    assert runs_of(lonely) == {young: "RUNNING"}  # nothing started beside it
    assert lines[-1].startswith("its pay run ") and " shows Running, last heard at " in (lines[-1])
    assert lines[-1].endswith("resumes it once") and "no watchdog is deployed" in lines[-1]

    async def deploy_watchdog() -> None:
        async with get_client() as client:
            flow_id = await client.create_flow_from_name("watchdog")
            await client.create_deployment(
                flow_id=flow_id,
                name="watchdog",
                entrypoint="flows/watchdog.py:watchdog",
                schedules=[
                    # A schedule this server (no scheduler here) never fires in the test.
                    {"schedule": IntervalSchedule(interval=timedelta(minutes=3)), "active": True}
                ],
            )

    asyncio.run(deploy_watchdog())
    try:
        watched = submitted(ledger, "ap-watched")
        pay_run(watched)
        said = approve(ledger, watched, prefect_api, tmp_path)[-1]
        assert "if its worker died, the watchdog (watchdog/watchdog, every 3 min) marks it " in said
        assert "Crashed and resumes the batch once, at its first look after " in said
    finally:
        asyncio.run(_delete_watchdog())


async def _delete_watchdog() -> None:
    async with get_client() as client:
        deployment = await client.read_deployment_by_name("watchdog/watchdog")
        await client.delete_deployment(deployment.id)


def test_a_one_batch_runs_dead_parent_is_marked_crashed_with_its_pay_batch_subflow(
    prefect_api, ledger
):
    batch_id = register(ledger, [row("ob-1", 2)])  # under every limit: approved by itself

    @flow(name="payout-batch")
    def payout_batch() -> None: ...

    @flow(name="pay-batch")
    def pay_batch() -> None: ...

    @task(name="pay-batch")
    def subflow_task() -> None: ...

    async def one_batch_run() -> tuple[str, str]:
        """A payout-batch run paying its batch in a pay-batch subflow, both shown Running."""
        async with get_client() as client:
            parent = await client.create_flow_run(payout_batch, state=Running())
            placeholder = await client.create_task_run(
                subflow_task, parent.id, dynamic_key="0", state=Running()
            )
            child = await client.create_flow_run(
                pay_batch,
                tags=[batch_tag(batch_id)],
                parent_task_run_id=placeholder.id,
                state=Running(),
            )
            return str(parent.id), str(child.id)

    parent, child = asyncio.run(one_batch_run())
    backdate_run(prefect_api, child, 300)
    beat(at_past(ledger, 120), dead_run_id(), batch_id, "flow run paying")
    window = timedelta(minutes=1)
    runs = PrefectRuns(ledger, "pay-batch/pay-batch", window)
    asyncio.run(_pay_run_deployment())

    watched = watch_batch(ledger, runs, batch_id, "w1", record_form_answer, lambda _: None, window)

    assert watched is not None and watched.verdict is Verdict.RESUMED
    parent_name = asyncio.run(_name_of(parent))
    assert f"; payout-batch run {parent_name} above it marked Crashed too" in watched.line
    states = runs_of(batch_id)
    assert states.pop(child) == "CRASHED" and list(states.values()) == ["SCHEDULED"]
    assert asyncio.run(_state_of(parent)) == "CRASHED"


async def _pay_run_deployment() -> None:
    async with get_client() as client:
        flow_id = await client.create_flow_from_name("pay-batch")
        await client.create_deployment(
            flow_id=flow_id, name="pay-batch", entrypoint="flows/pay_batch.py:pay_batch"
        )


async def _name_of(run_id: str) -> str:
    async with get_client() as client:
        return (await client.read_flow_run(UUID(run_id))).name


async def _state_of(run_id: str) -> str:
    async with get_client() as client:
        state = (await client.read_flow_run(UUID(run_id))).state
        return state.type.value if state else ""
