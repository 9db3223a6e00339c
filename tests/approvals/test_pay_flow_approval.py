"""The real pay flow asks the approval policy (the shipped
`payflow/defaults/approvals.yaml`) on a real Prefect server: it goes on by itself under every
limit and pauses above one; an answer is recorded in the ledger and the flow trusts the ledger,
not the input."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from console.reused_hashes import one_hash_per_password  # noqa: F401  (see its module)
from paying_support import pay_state, register, row
from prefect import get_client
from prefect.flow_runs import resume_flow_run
from sqlalchemy import create_engine, update
from support.operators import actor, add_people, sign_in_at
from support.stats import sandbox_stats

from payflow.acts import submit
from payflow.acts.auth import issue_code
from payflow.approvals import UnknownBatch
from payflow.approvals.resume import paused_runs
from payflow.flows.approval import ApprovalNeeded, NotApproved
from payflow.flows.pay_batch import pay_result
from payflow.ledger import Ledger, utc_now
from payflow.ledger.tables import Batch
from payflow.run_results import PayResult

REPO = Path(__file__).resolve().parents[2]
# Shipped rules for XOF: up to 1,000,000 goes on by itself; up to 50,000,000 one step; above,
# two steps; a row above 5,000,000 needs its own approval.
UNDER_LIMITS = Decimal(5000)
ONE_STEP = Decimal(2_000_000)
TWO_STEPS = Decimal(60_000_000)


def batch_of(ledger: Ledger, prefix: str, *amounts: Decimal, maker: str = "alice") -> str:
    """A batch submitted by `maker` (an operator who is a maker and a checker); bob and carol
    are checkers."""
    rows = [row(f"{prefix}-{n}", n, amount=a) for n, a in enumerate(amounts, start=2)]
    batch_id = register(ledger, rows)
    add_people(ledger, **{maker: "maker,checker"}, bob="checker", carol="checker")
    submit(ledger, batch_id, actor(ledger, maker))
    return batch_id


def code_for(ledger: Ledger, batch_id: str, checker: str) -> str:
    """The one-time code `payflow approve BATCH --code` prints for a signed-in checker."""
    return issue_code(ledger, batch_id, actor(ledger, checker))


def pay(sandbox, ledger: Ledger, batch_id: str, tmp_path: Path, **options) -> PayResult:
    return pay_result(pay_state(sandbox, ledger, batch_id, tmp_path / "reports", **options))


def pay_in_thread(sandbox, ledger, batch_id, tmp_path) -> tuple[threading.Thread, dict]:
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["result"] = pay(sandbox, ledger, batch_id, tmp_path)
        except BaseException as exc:  # the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def wait_for_pause(batch_id: str, thread: threading.Thread, not_in: set[str] = frozenset()):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = [r for r in asyncio.run(paused_runs(batch_id)) if r not in not_in]
        if found:
            return found[0]
        assert thread.is_alive(), "the pay flow ended without pausing"
        time.sleep(0.2)
    raise AssertionError("the pay flow never paused for approval")


def form_text(flow_run_id) -> str:
    """The description Prefect's resume form shows for a paused run."""

    async def read() -> str:
        async with get_client() as client:
            run = await client.read_flow_run(flow_run_id)
            keys = run.state.state_details.run_input_keyset
            return json.loads(await client.read_flow_run_input(flow_run_id, keys["description"]))

    return asyncio.run(read())


def posted(sandbox) -> dict[str, int]:
    return sandbox_stats(sandbox.url)["createAttempts"]


def test_a_batch_under_every_limit_pays_without_a_pause(prefect_api, sandbox, ledger, tmp_path):
    batch_id = batch_of(ledger, "under", UNDER_LIMITS, UNDER_LIMITS)

    result = pay(sandbox, ledger, batch_id, tmp_path)

    assert result.counts.statuses == {"COMPLETED": 2}
    assert ledger.approvals_of(batch_id) == []  # nobody was asked
    assert asyncio.run(paused_runs(batch_id)) == []


def test_above_a_limit_the_flow_pauses_and_a_ui_answer_is_recorded(
    prefect_api, sandbox, ledger, tmp_path
):
    batch_id = batch_of(ledger, "above", ONE_STEP)
    thread, outcome = pay_in_thread(sandbox, ledger, batch_id, tmp_path)
    first = wait_for_pause(batch_id, thread)
    assert posted(sandbox) == {}, "something was sent before approval"

    first_form = form_text(first)
    assert "payflow approve" in first_form and "--code" in first_form
    # The maker (a checker too) answers with her own code: refused, the flow asks again.
    resume_flow_run(
        first, run_input={"approve": True, "approval_code": code_for(ledger, batch_id, "alice")}
    )
    second = wait_for_pause(batch_id, thread, not_in={first})
    assert posted(sandbox) == {} and ledger.approvals_of(batch_id) == []
    # The form comes back saying why: it came back unchanged, and whoever answered could not
    # tell a refused answer from none.
    assert "not recorded" not in first_form
    assert (
        f"**The last answer was not recorded:** alice made batch {batch_id} and cannot approve "
        "it. Answer again." in form_text(second)
    )

    # Without a code (a name typed anywhere counts for nothing), or with a made-up one: refused,
    # and the form says where to approve.
    resume_flow_run(second, run_input={"approve": True})
    third = wait_for_pause(batch_id, thread, not_in={first, second})
    resume_flow_run(third, run_input={"approve": True, "approval_code": "NOT-A-CODE"})
    fourth = wait_for_pause(batch_id, thread, not_in={first, second, third})
    assert posted(sandbox) == {} and ledger.approvals_of(batch_id) == []
    assert f"get one with `payflow approve {batch_id} --code`" in form_text(fourth)

    resume_flow_run(
        fourth, run_input={"approve": True, "approval_code": code_for(ledger, batch_id, "bob")}
    )
    thread.join(timeout=180)

    assert outcome["result"].counts.statuses == {"COMPLETED": 1}
    [record] = ledger.approvals_of(batch_id)
    assert (record.approver, record.decision, record.via) == ("bob", "approve", "prefect")
    assert posted(sandbox) == {"above-2": 1}


def test_a_bare_resume_is_refused_and_a_decline_pays_nothing(
    prefect_api, sandbox, ledger, tmp_path
):
    batch_id = batch_of(ledger, "bare", ONE_STEP)
    thread, outcome = pay_in_thread(sandbox, ledger, batch_id, tmp_path)
    paused = wait_for_pause(batch_id, thread)

    code = code_for(ledger, batch_id, "bob")
    with pytest.raises(Exception):
        resume_flow_run(paused, run_input={"approval_code": code})  # no `approve`: no default
    with pytest.raises(Exception):  # a name is no field of the form: it counts for nothing
        resume_flow_run(paused, run_input={"approve": True, "approver": "bob"})
    assert asyncio.run(paused_runs(batch_id)) == [paused]

    # Prefect's form shows `approve` as a switch, off until moved: a code and Submit sent
    # approve=false and declined the batch for good. Without a reason it is asked again.
    resume_flow_run(paused, run_input={"approve": False, "approval_code": code})
    again = wait_for_pause(batch_id, thread, not_in={paused})
    assert ledger.approvals_of(batch_id) == []
    assert (
        "**The last answer was not recorded:** approve was off and decline_reason was empty: "
        "switch approve on to pay the batch, or write why in decline_reason to decline it. "
        "Answer again." in form_text(again)
    )

    resume_flow_run(
        again,
        run_input={"approve": False, "approval_code": code, "decline_reason": "wrong month"},
    )
    thread.join(timeout=120)

    assert isinstance(outcome.get("error"), NotApproved)
    assert "declined by bob (wrong month)" in str(outcome["error"])
    assert posted(sandbox) == {}


def test_a_changed_batch_voids_its_approval(prefect_api, sandbox, ledger, tmp_path):
    from payflow.acts import decide

    batch_id = batch_of(ledger, "chg", ONE_STEP)
    decide(ledger, batch_id, actor(ledger, "bob"), approve=True, via="cli")
    # The batch gains a row after it was approved.
    ledger.register_batch(batch_id, "test.csv", [row("chg-9", 9, amount=Decimal(5))], [])

    with pytest.raises(ApprovalNeeded, match="waiting for approval by 1 person"):
        pay(sandbox, ledger, batch_id, tmp_path, wait_for_approval=False)

    assert posted(sandbox) == {}


def test_an_expired_approval_pays_nothing(prefect_api, sandbox, ledger, tmp_path):
    batch_id = batch_of(ledger, "exp", ONE_STEP)
    engine = create_engine(ledger.url)
    with engine.begin() as connection:  # a day and more passes with nobody approving
        connection.execute(
            update(Batch)
            .where(Batch.batch_id == batch_id)
            .values(created_at=utc_now() - timedelta(hours=25))
        )
    engine.dispose()

    with pytest.raises(NotApproved, match="expired") as stopped:
        pay(sandbox, ledger, batch_id, tmp_path)

    assert stopped.value.status_name == "Expired"
    assert posted(sandbox) == {} and asyncio.run(paused_runs(batch_id)) == []


def approve_cli(
    user: str,
    batch_id: str,
    ledger: Ledger,
    prefect_api: str,
    tmp_path: Path,
    *flags: str,
    as_json: bool = True,
):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    sign_in_at(ledger.url, user, tmp_path / f"home-{user}")  # `payflow login USER`
    env.update(
        PAYFLOW_LEDGER_URL=ledger.url,
        PAYFLOW_HOME=str(tmp_path / f"home-{user}"),
        PREFECT_API_URL=prefect_api,
        PREFECT_HOME=str(tmp_path / "prefect-home"),
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "payflow",
            "approve",
            batch_id,
            *(["--json"] if as_json else []),
            *flags,
        ],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_payflow_approve_by_two_people_resumes_the_paused_pay_flow(
    prefect_api, sandbox, ledger, tmp_path
):
    batch_id = batch_of(ledger, "two", TWO_STEPS)
    thread, outcome = pay_in_thread(sandbox, ledger, batch_id, tmp_path)
    paused = wait_for_pause(batch_id, thread)

    # Its row above the per-row maximum must be acknowledged, as a warning is.
    unread = approve_cli("bob", batch_id, ledger, prefect_api, tmp_path)
    assert unread.returncode == 2 and "acknowledge these warnings" in unread.stderr
    ack = "--acknowledge-warnings"
    bob = approve_cli("bob", batch_id, ledger, prefect_api, tmp_path, ack)
    assert bob.returncode == 0, bob.stderr
    assert '"status": "Pending"' in bob.stdout and '"resumed": []' in bob.stdout
    again = approve_cli("bob", batch_id, ledger, prefect_api, tmp_path, ack)
    assert again.returncode == 2 and "needs another person" in again.stderr
    maker = approve_cli("alice", batch_id, ledger, prefect_api, tmp_path, ack)
    assert maker.returncode == 2 and "alice made batch" in maker.stderr
    assert asyncio.run(paused_runs(batch_id)) == [paused] and posted(sandbox) == {}

    carol = approve_cli("carol", batch_id, ledger, prefect_api, tmp_path, ack)
    assert carol.returncode == 0, carol.stderr
    assert '"status": "Approved"' in carol.stdout and paused in carol.stdout
    assert '"totals": {"XOF": {"rows": 1, "amount": "60000000"}}' in carol.stdout
    thread.join(timeout=180)

    assert outcome["result"].counts.statuses == {"COMPLETED": 1}
    assert [(r.approver, r.via) for r in ledger.approvals_of(batch_id)] == [
        ("bob", "cli"),
        ("carol", "cli"),
    ]
    assert posted(sandbox) == {"two-2": 1}


def test_payflow_approve_tells_the_operator_what_it_did_and_what_comes_next_not_the_pause_form(
    prefect_api, sandbox, ledger, tmp_path
):
    # Found in review: `payflow approve` printed the pause form, Prefect's "Answer with `approve`
    # (true to pay, false to decline), your name as `approver`; or run `payflow approve ...`"
    # under "waits for approval": the operator who had just approved read a question still open.
    batch_id = batch_of(ledger, "told", TWO_STEPS)
    thread, outcome = pay_in_thread(sandbox, ledger, batch_id, tmp_path)
    paused = wait_for_pause(batch_id, thread)
    ack = "--acknowledge-warnings"  # its row is above the per-row maximum

    bob = approve_cli("bob", batch_id, ledger, prefect_api, tmp_path, ack, as_json=False)
    carol = approve_cli("carol", batch_id, ledger, prefect_api, tmp_path, ack, as_json=False)
    thread.join(timeout=180)

    assert bob.returncode == 0 and carol.returncode == 0, bob.stderr + carol.stderr
    totals = "  XOF        1 payout             60000000"  # what each approved
    # What each said they read, as the ledger's approval record keeps it.
    read = (
        "  warning acknowledged: told-2: 60000000 XOF is above the per-row maximum 5000000: "
        "it needs its own approval"
    )
    assert bob.stdout.splitlines() == [
        f"approved by bob; batch {batch_id} is now Pending",
        totals,
        read,
        f"waiting for 1 more approval step, each by another person: payflow approve {batch_id}",
    ]
    assert carol.stdout.splitlines() == [
        f"approved by carol; batch {batch_id} is now Approved",
        totals,
        read,
        f"resumed paused flow run {paused}: it pays the batch now",
    ]
    assert outcome["result"].counts.statuses == {"COMPLETED": 1}
    assert posted(sandbox) == {"told-2": 1}


def test_paying_an_unknown_batch_id_sends_nothing(prefect_api, sandbox, ledger, tmp_path):
    with pytest.raises(UnknownBatch):
        pay(sandbox, ledger, "no-such-batch", tmp_path)
    assert posted(sandbox) == {}
