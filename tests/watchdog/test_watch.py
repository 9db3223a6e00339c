"""The watchdog's decisions on a real ledger, with a fake of Prefect's side (`Runs`): which
batches it leaves alone, which it resumes once, which become a finding, and what it tells.
The real Prefect side is exercised end to end in tests/flows/test_watchdog_e2e.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from paying_support import register, row
from support.beats import at_past, dead_run_id
from support.operators import actor, add_people, set_ledger_policy

from payflow.acts import submit
from payflow.acts.auth import issue_code
from payflow.approvals.status import record_decision
from payflow.ledger import Ledger
from payflow.ledger.run_beats import beat
from payflow.notify import Notice
from payflow.watchdog.answers import record_form_answer
from payflow.watchdog.watch import Verdict, watch_once


@dataclass
class FakeRun:
    run_id: str = "run-1"
    name: str = "calm-owl"
    state_name: str = "Running"
    message: str = ""
    start_time: Any = field(default_factory=lambda: datetime.now(UTC) - timedelta(minutes=5))
    shown_living: bool = True
    crashed: bool = False
    cancelled: bool = False
    failed: bool = False
    final: bool = False
    resumes: int = 0


@dataclass
class FakeRuns:
    """Prefect's side as the watchdog sees it: one newest run per batch, answers, starts."""

    newest: FakeRun | None = None
    answers_given: list[dict[str, Any]] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)  # runs above the newest, shown living

    def latest(self, batch_id: str) -> FakeRun | None:
        return self.newest

    def answers(self, run_id: str) -> list[dict[str, Any]]:
        return self.answers_given

    def crash(self, run_id: str, why: str) -> list[str]:
        self.crashed.append(run_id)
        return self.parents

    def start(self, batch_id: str) -> str:
        self.started.append(batch_id)
        return f"new-run-{len(self.started)}"


@pytest.fixture
def ledger(tmp_path) -> Ledger:
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as opened:
        yield opened


def look(
    ledger: Ledger,
    runs: FakeRuns | None,
    told: list[Notice],
    holder: str = "w1",
):
    return watch_once(
        ledger,
        runs,
        holder=holder,
        record_answer=record_form_answer,
        tell=told.append,
        stale_after=timedelta(minutes=1),
    )


def died_paying(ledger: Ledger, batch_id: str) -> None:
    """A run claimed a row and died two minutes ago (its beat never ended)."""
    dead = dead_run_id()
    beat(at_past(ledger, 120), dead, batch_id, "flow run calm-owl")
    assert ledger.claim_for_submit(batch_id, dead, 1)


def test_a_run_that_beats_is_left_alone_and_a_dead_one_resumed_once(ledger):
    batch_id = register(ledger, [row("wd-1", 2), row("wd-2", 3)])
    beat(ledger, "worker-7.example:1:cafe", batch_id, "flow run alive")
    runs, told = FakeRuns(FakeRun()), []
    assert look(ledger, runs, told) == []

    other = register(ledger, [row("wd-3", 2), row("wd-4", 3)])
    died_paying(ledger, other)
    [watched] = look(ledger, runs, told)
    assert watched.verdict is Verdict.RESUMED and watched.run_id == "new-run-1"
    assert runs.crashed == ["run-1"] and runs.started == [other]
    assert "2 rows unsent" in watched.line
    [notice] = told
    assert notice.title == f"payflow: run crashed and resumed: batch {other}"
    # A second watchdog at once: the lease is taken, nothing more started.
    [second] = look(ledger, runs, told, holder="w2")
    assert second.verdict is Verdict.ELSEWHERE and runs.started == [other]


def test_an_answer_typed_in_a_dead_runs_form_is_recorded_with_the_approve_checks(ledger):
    big = [row(f"wd-big-{n}", n, amount=Decimal(900_000)) for n in (2, 3)]  # over the 0-step band
    batch_id = register(ledger, big)
    add_people(ledger, mia="maker,checker", carl="checker")
    submit(ledger, batch_id, actor(ledger, "mia"))
    beat(at_past(ledger, 120), dead_run_id(), batch_id, "flow run paused")
    # A name typed in the form is nobody: only a checker's one-time code counts, and the
    # maker's own code is refused as `payflow approve` refuses her: the run asks again.
    own = issue_code(ledger, batch_id, actor(ledger, "mia"))
    answers = [{"approve": True, "approver": "carl", "approval_code": "NOPE"}]
    runs = FakeRuns(
        FakeRun(state_name="Running"), [*answers, {"approve": True, "approval_code": own}]
    )
    told: list[Notice] = []

    [refused] = look(ledger, runs, told)
    assert "an answer in its form refused, an answer in its form refused" in refused.line
    assert "asks for approval again" in refused.line
    assert ledger.approvals_of(batch_id) == []

    code = issue_code(ledger, batch_id, actor(ledger, "carl"))
    runs.answers_given = [{"approve": True, "approval_code": code}]
    runs.newest = FakeRun(run_id="run-2")
    beat(at_past(ledger, 120), dead_run_id(), batch_id, "flow run paused again")
    # The run started in its place died paused too; the next watchdog (its lease) looks again.
    [recorded] = look(ledger, runs, told, holder="w1")
    assert "an answer in its form recorded" in recorded.line
    assert [(r.approver, r.via) for r in ledger.approvals_of(batch_id)] == [("carl", "prefect")]


def test_a_batch_whose_last_run_failed_becomes_one_finding_told_once(ledger):
    batch_id = register(ledger, [row("wd-f1", 2)])
    beat(at_past(ledger, 120), dead_run_id(), batch_id, "flow run failed")
    runs = FakeRuns(
        FakeRun(shown_living=False, failed=True, final=True, message="balance too low\nmore")
    )
    told: list[Notice] = []
    [first] = look(ledger, runs, told)
    assert first.verdict is Verdict.NOT_RESUMED and "balance too low" in first.line
    [finding] = [f for f in ledger.findings(batch_id) if f.kind == "not_resumed"]
    assert finding.state == "open" and finding.row_number == 0
    ledger.acknowledge_finding(batch_id, finding.id, actor="ops", note="topping up")
    look(ledger, runs, told, holder="w2")
    assert [n.event.value for n in told] == ["finding opened"]  # acknowledged: not told again
    assert runs.started == []


def test_a_stopped_batch_is_left_as_it_is(ledger):
    batch_id = register(ledger, [row("wd-s1", 2)])
    died_paying(ledger, batch_id)
    runs = FakeRuns(FakeRun(shown_living=False, cancelled=True, final=True))
    [watched] = look(ledger, runs, [])
    assert watched.verdict is Verdict.STOPPED and runs.started == []
    assert f"payflow pay {batch_id}" in watched.line


def test_without_prefect_a_dead_run_is_reported_for_payflow_pay(ledger):
    batch_id = register(ledger, [row("wd-n1", 2)])
    died_paying(ledger, batch_id)
    [watched] = look(ledger, None, [])
    assert watched.verdict is Verdict.NEEDS_PAY and f"payflow pay {batch_id}" in watched.line


def test_declined_batches_and_batches_awaiting_a_person_are_not_the_watchdogs(ledger):
    big = [row("wd-d1", 2, amount=Decimal(900_000)), row("wd-d2", 3, amount=Decimal(900_000))]
    declined = register(ledger, big)
    ledger.set_maker(declined, "mia")
    record_decision(ledger, declined, approver="carl", decision="decline", note="wrong day")
    waiting = register(
        ledger, [row("wd-w1", 2, amount=Decimal(900_000)), row("wd-w2", 3, amount=Decimal(900_000))]
    )
    assert look(ledger, FakeRuns(None), []) == []
    assert waiting


def test_checkers_are_told_once_when_a_waiting_batch_is_about_to_expire(ledger, tmp_path):
    set_ledger_policy(
        ledger, 'currencies:\n  "*":\n    bands:\n      - {steps: 1}\n    expiry_hours: 0.5\n'
    )
    batch_id = register(ledger, [row("wd-x1", 2)])
    beat(ledger, "worker-7.example:1:cafe", batch_id, "flow run paused")  # waits alive
    told: list[Notice] = []
    assert look(ledger, FakeRuns(None), told) == []
    assert look(ledger, FakeRuns(None), told, holder="w2") == []
    [notice] = told
    assert notice.title == f"payflow: approval about to expire: batch {batch_id}"
    assert "it expires in" in notice.body and f"payflow approve {batch_id}" in notice.body


def test_a_batch_whose_resumed_runs_keep_dying_becomes_a_finding_not_a_fourth_run(ledger):
    batch_id = register(ledger, [row("wd-r1", 2)])
    died_paying(ledger, batch_id)
    runs = FakeRuns(FakeRun(shown_living=False, crashed=True, final=True, resumes=3))
    told: list[Notice] = []
    [watched] = look(ledger, runs, told)
    assert watched.verdict is Verdict.NOT_RESUMED and runs.started == []
    assert "died again after 3 resumes by the watchdog" in watched.line
    assert [n.event.value for n in told] == ["finding opened"]


def test_a_one_batch_runs_parent_crashed_with_its_pay_run_is_said_in_the_line(ledger):
    batch_id = register(ledger, [row("wd-p1", 2)])
    died_paying(ledger, batch_id)
    runs = FakeRuns(FakeRun(), parents=["payout-batch run calm-owl"])
    [watched] = look(ledger, runs, [])
    assert watched.verdict is Verdict.RESUMED and runs.crashed == ["run-1"]
    assert watched.line == (
        "its pay run died (1 row unsent); resumed in run new-run-1; payout-batch run calm-owl "
        "above it marked Crashed too"
    )
