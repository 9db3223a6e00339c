"""The watchdog end to end, on one deployed stack (a Prefect server on PostgreSQL, two process
workers, a `payflow sandbox` process, a PostgreSQL ledger) with PAYFLOW_NOTIFY pointing at a
JSON webhook sink and an SMTP server on 127.0.0.1:

(c) an approval that nobody gives in time ends its run in one line, no traceback, and tells;
(a) a worker SIGKILLed with its run mid-batch: the watchdog resumes the batch in one new run,
    every row is paid once, and "run crashed and resumed" is delivered;
(b) a paused run's worker killed, then approved through Prefect's resume input: the watchdog
    records that answer, resumes, and the batch is paid once (two watchdogs at once start one
    run).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from support.deployments import (
    APPROVER,
    MAKER,
    PAYFLOW,
    REPO,
    RUN_WINDOW,
    Stack,
    batch_file,
    deployed_stack,
    final,
    kill_worker_and_its_run,
    paused,
    pay_runs,
    set_latency,
    start_worker,
    wait_for,
)
from support.receivers import JsonSink, SmtpSink, mail_text, receivers
from support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def sinks() -> Iterator[tuple[JsonSink, SmtpSink]]:
    with receivers() as both:
        yield both


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, sinks: tuple[JsonSink, SmtpSink]
) -> Iterator[Stack]:
    hook, mail = sinks
    root = tmp_path_factory.mktemp("watchdog-e2e")
    with deployed_stack(root, PAYFLOW_NOTIFY=f"{hook.url} {mail.url}") as deployed:
        deployed.inbox.mkdir()
        yield deployed


def dropped_and_paused(stack: Stack, name: str, rows: int, first: int) -> tuple[str, list[str]]:
    """A file through the daily run: its batch registered, its pay run paused for approval."""
    batch_id, ids = batch_file(stack.inbox / f"{name}.csv", f"wd-{name}", rows, first)
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"
    wait_for(f"batch {name}'s pause", lambda: paused(stack, batch_id))
    return batch_id, ids


def notices(sinks: tuple[JsonSink, SmtpSink], title: str) -> tuple[dict[str, Any], str]:
    """The webhook's body and the mail's text of the notification titled `title`."""
    hook, mail = sinks
    body = wait_for(
        f"the webhook {title!r}", lambda: next((b for b in hook.bodies if b["title"] == title), 0)
    )
    text = wait_for(
        f"the mail {title!r}",
        lambda: next((mail_text(m) for m in mail.mails if title in mail_text(m)), ""),
    )
    return body, text


def run_logs(stack: Stack) -> list[str]:
    """Every log line Prefect's server holds, of every flow run."""
    runs = [run["id"] for run in stack.api("POST", "/flow_runs/filter", {})]
    logs = stack.api("POST", "/logs/filter", {"logs": {"flow_run_id": {"any_": runs}}})
    return [str(log["message"]) for log in logs]


def watchdog_once(stack: Stack) -> tuple[int, list[dict[str, Any]]]:
    """`payflow watchdog --once --json`: its exit code and its lines."""
    done = subprocess.run(
        [*PAYFLOW, "watchdog", "--once", "--json"],
        cwd=REPO,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line]


def past_the_window(stack: Stack, run_id: str, last_heard: datetime) -> None:
    """Sleep until the run started, and was last heard (`last_heard`), over RUN_WINDOW ago (the
    heartbeats' window), and a little. A killed run's process may linger as a zombie no one
    reaps: then only its beat's age tells the watchdog it is gone, not the run's start."""
    start = datetime.fromisoformat(stack.api("GET", f"/flow_runs/{run_id}")["start_time"])
    since = max(start, last_heard)
    time.sleep(max(0.0, (since + RUN_WINDOW - datetime.now(UTC)).total_seconds()) + 3)


def test_c_an_approval_nobody_gives_in_time_ends_in_one_line_and_tells_the_maker(
    stack: Stack, sinks: tuple[JsonSink, SmtpSink]
) -> None:
    batch_id, _ = batch_file(stack.inbox / "late.csv", "wd-late", 2, 200_000)
    stack.inbox.joinpath("late.csv").rename(stack.root / "late.csv")
    run = stack.deployment_run(
        "payout-batch/one-batch",
        "-p",
        f"path={stack.root / 'late.csv'}",
        "-p",
        "approval_timeout_seconds=5",
    )
    assert wait_for("the run to end", lambda: final(stack, run)) == "FAILED"

    message = f"batch {batch_id}: no answer within 5 s; nothing was paid"
    assert stack.api("GET", f"/flow_runs/{run}")["state"]["message"].endswith(message)

    # Logs reach the server in batches, after the run's final state: wait for its last line.
    def with_the_last_line() -> list[str] | None:
        found = run_logs(stack)
        return found if any(message in line for line in found) else None

    lines = wait_for("the run's last log line", with_the_last_line, timeout=60)
    # The pause's FlowPauseTimeout was logged with its whole traceback in the worker's log.
    assert not [line for line in lines if "Traceback" in line], lines
    for log in stack.worker_logs.values():
        assert "Traceback" not in log.read_text(), log
    asked, asked_mail = notices(sinks, f"payflow: approval needed: batch {batch_id}")
    assert f"payflow approve {batch_id}" in asked["message"]
    assert "2 payouts to send" in asked["message"] and "2 payouts to send" in asked_mail
    ended, ended_mail = notices(sinks, f"payflow: approval expired: batch {batch_id}")
    assert ended["message"].splitlines() == [
        f"Batch {batch_id}: no answer within 5 s; nothing was paid.",
        "2 payouts to send (2015 XOF), of 2 rows",
        f"Next: payflow status {batch_id}",
        "(for the maker)",
    ]
    assert f"Next: payflow status {batch_id}" in ended_mail
    assert "22507" not in ended["message"] + asked["message"]  # no requisites


def test_a_a_worker_killed_mid_batch_is_resumed_once_by_the_watchdog_and_said(
    stack: Stack, sinks: tuple[JsonSink, SmtpSink]
) -> None:
    batch_id, ids = dropped_and_paused(stack, "killed", 60, 300_000)
    [dead] = [run["id"] for run in pay_runs(stack, batch_id)]
    set_latency(stack, 1.0)
    assert stack.approve(batch_id)["resumed"]

    def sent_and_sending() -> bool:
        states = dict(
            stack.ledger(
                "SELECT state, count(*) FROM payouts WHERE batch_id = %s GROUP BY state", batch_id
            )
        )
        sent = sum(states.get(s, 0) for s in ("CREATED", "PROCESSING", "COMPLETED"))
        return sent > 0 and states.get("SUBMITTING", 0) > 0

    wait_for("rows sent and rows being sent", sent_and_sending, timeout=120)
    killed = kill_worker_and_its_run(stack, dead)
    last_heard = datetime.now(UTC)
    set_latency(stack, 0.0)
    start_worker(stack, killed, stack.root / f"{killed}-after-a.log")

    # Until its heartbeat is RUN_WINDOW old the watchdog leaves the run alone; then it resumes it.
    # Asked only past that window, and then every few seconds: each `payflow watchdog` is a
    # process of its own (seconds of CPU), asked every half second before.
    def resumed() -> dict[str, Any] | None:
        _, lines = watchdog_once(stack)
        return next((x for x in lines if x["batch_id"] == batch_id), None)

    past_the_window(stack, dead, last_heard)
    watched = wait_until(resumed, what="the watchdog's resume", timeout=240, interval=5)
    assert watched["verdict"] == "resumed", watched
    successor = watched["run_id"]
    # A second look (another watchdog) starts nothing more: the successor waits or pays.
    _, again = watchdog_once(stack)
    assert [x["verdict"] for x in again if x["batch_id"] == batch_id] in ([], ["waiting"])

    assert wait_for("the resuming run", lambda: final(stack, successor), 240) == "COMPLETED"
    assert stack.state_of(dead) == "CRASHED"
    assert {run["id"] for run in pay_runs(stack, batch_id)} == {dead, successor}
    sent = stack.sandbox_stats()["payoutsByExternalId"]
    assert {i: sent.get(i) for i in ids} == dict.fromkeys(ids, 1)
    states = stack.ledger(
        "SELECT state, count(*) FROM payouts WHERE batch_id = %s GROUP BY state", batch_id
    )
    assert dict(states) == {"COMPLETED": 60}
    body, text = notices(sinks, f"payflow: run crashed and resumed: batch {batch_id}")
    assert f"Resumed in run {successor}." in body["message"]
    assert f"Next: payflow status {batch_id}" in body["message"] and "rows unsent" in text


def test_b_an_approval_sent_to_a_dead_paused_run_is_recorded_and_the_batch_paid_once(
    stack: Stack, sinks: tuple[JsonSink, SmtpSink]
) -> None:
    batch_id, ids = dropped_and_paused(stack, "answered", 4, 400_000)
    [dead] = [run["id"] for run in pay_runs(stack, batch_id)]
    [pause] = [run["id"] for run in paused(stack, batch_id)]
    # The maker submits the batch the daily run registered; the checker gets a one-time code
    # for the form (a name typed there counts for nothing).
    stack.cli(*PAYFLOW, "submit", batch_id, env=stack.person(MAKER))
    code = stack.cli(*PAYFLOW, "approve", batch_id, "--code", env=stack.person(APPROVER)).strip()
    killed = kill_worker_and_its_run(stack, dead)
    last_heard = datetime.now(UTC)
    start_worker(stack, killed, stack.root / f"{killed}-after-b.log")
    # Prefect's form: the server takes the answer and sets the run Running, with nobody there.
    answer = {"approve": True, "approval_code": code}
    stack.api("POST", f"/flow_runs/{pause}/resume", {"run_input": answer})
    assert wait_for("the resume", lambda: stack.state_of(pause) == "RUNNING", timeout=30)
    assert stack.ledger("SELECT approver FROM approvals WHERE batch_id = %s", batch_id) == []
    past_the_window(stack, dead, last_heard)

    # The scheduled watchdog and one from a shell at the same time: one resuming run.
    scheduled = stack.deployment_run("watchdog/watchdog")
    _, by_hand = watchdog_once(stack)
    assert wait_for("the watchdog run", lambda: final(stack, scheduled), 240) == "COMPLETED"
    runs = pay_runs(stack, batch_id)
    assert len(runs) == 2, runs
    [successor] = [run["id"] for run in runs if run["id"] != dead]
    assert wait_for("the resuming run", lambda: final(stack, successor), 240) == "COMPLETED"
    assert stack.state_of(dead) == "CRASHED" and stack.state_of(pause) == "CRASHED"
    records = stack.ledger("SELECT approver, via FROM approvals WHERE batch_id = %s", batch_id)
    assert records == [(APPROVER, "prefect")]
    sent = stack.sandbox_stats()["payoutsByExternalId"]
    assert {i: sent.get(i) for i in ids} == dict.fromkeys(ids, 1)
    body, _ = notices(sinks, f"payflow: run crashed and resumed: batch {batch_id}")
    assert "an answer in its form recorded" in body["message"]
    assert [x["verdict"] for x in by_hand if x["batch_id"] == batch_id] in (
        [],
        ["resumed"],
        ["taken"],
        ["waiting"],
    )


def test_d_payflow_stop_cancels_the_batchs_run_keeps_every_row_and_the_watchdog_leaves_it(
    stack: Stack,
) -> None:
    batch_id, ids = dropped_and_paused(stack, "stopped", 3, 500_000)
    [run] = [r["id"] for r in pay_runs(stack, batch_id)]

    said = stack.cli(*PAYFLOW, "stop", batch_id, env=stack.person(MAKER))

    assert f"batch {batch_id}: " in said and "cancelled" in said
    assert f"`payflow pay {batch_id}` goes on" in said
    assert wait_for("the stopped run", lambda: final(stack, run)) == "CANCELLED"
    status = subprocess.run(
        [*PAYFLOW, "status", batch_id, "--no-refresh"],
        cwd=REPO,
        env=stack.env,
        capture_output=True,
        text=True,
    )
    last = status.stdout.strip().splitlines()[-1]
    assert last.startswith("stopped by maker-e2e at "), status.stdout
    assert last.endswith(
        f"`payflow approve {batch_id}`, then `payflow pay {batch_id}` sends each once (a row "
        "left SUBMITTING is looked up first)"
    )
    _, looked = watchdog_once(stack)
    assert [x["verdict"] for x in looked if x["batch_id"] == batch_id] in ([], ["stopped"])
    assert [r["id"] for r in pay_runs(stack, batch_id)] == [run]
    states = stack.ledger("SELECT state FROM payouts WHERE batch_id = %s", batch_id)
    assert sorted(s for (s,) in states) == ["VALIDATED"] * 3
    sent = stack.sandbox_stats()["payoutsByExternalId"]
    assert not {i for i in ids if i in sent}
