"""End to end on real servers: a Prefect server on PostgreSQL started here, `prefect deploy --all`
from prefect.yaml, two process workers, a `payflow sandbox` process and the PostgreSQL ledger.

The daily run takes an inbox of two good files and a broken one; the ledger's policy holds each
batch for approval (the workers' own approvals file, which asks none, decides nothing); a signed-in
maker submits it and `payflow approve` by a signed-in checker releases it; every payout reaches
the sandbox exactly once.
Then one large batch is paid by two pay runs at once, one on each worker.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from support.deployments import (
    APPROVER,
    HEADER,
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
    start,
    start_worker,
    wait_for,
    worker_of_run,
)
from support.operators import add_people
from support.servers import answers, free_port, stop_group

from payflow.inbox import SCHEDULE_ACTOR
from payflow.intake import batch_id_of
from payflow.ledger import Ledger

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(900)]

DEPLOYMENTS = {
    "daily-payouts",
    "pay-batch",
    "one-batch",
    "reconcile-pending",
    "reconcile-recent",
    "rerun-failed",
    "refunds",
    "links",
    "watchdog",
}

BIG = 500  # rows of the batch two pay runs pay at once


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with deployed_stack(tmp_path_factory.mktemp("daily-e2e")) as deployed:
        yield deployed


def test_every_deployment_is_deployed_with_the_daily_cron_in_its_timezone(stack: Stack) -> None:
    deployments = {d["name"]: d for d in stack.api("POST", "/deployments/filter", {})}
    assert set(deployments) >= DEPLOYMENTS
    [daily] = deployments["daily-payouts"]["schedules"]
    assert daily["schedule"]["cron"] and daily["schedule"]["timezone"] == "Europe/Moscow"
    assert deployments["daily-payouts"]["parameters"] == {"inbox": str(stack.inbox)}


def test_daily_inbox_pays_each_approved_file_once_and_sets_the_broken_one_aside(
    stack: Stack,
) -> None:
    stack.inbox.mkdir()
    first, first_ids = batch_file(stack.inbox / "monday-a.csv", "e2e-a", 3, 1)
    second, second_ids = batch_file(stack.inbox / "monday-b.csv", "e2e-b", 4, 100)
    (stack.inbox / "broken.csv").write_text("who,what\nx,y\n", encoding="utf-8")

    daily = stack.deployment_run("daily-payouts/daily-payouts")
    # The broken file fails the daily run only after the others got their pay runs.
    assert wait_for("the daily run to end", lambda: final(stack, daily)) == "FAILED"
    assert sorted(p.name for p in stack.inbox.iterdir() if p.is_file()) == []
    assert sorted(p.name for p in (stack.inbox / "processed").iterdir()) == [
        "monday-a.csv",
        "monday-b.csv",
    ]
    assert sorted(p.name for p in (stack.inbox / "failed").iterdir()) == [
        "broken.csv",
        "broken.csv.why.txt",
    ]
    why = (stack.inbox / "failed" / "broken.csv.why.txt").read_text(encoding="utf-8")
    assert "broken.csv" in why and "column" in why

    for batch_id in (first, second):
        # Both batches wait at once (one pay run each, on its own worker): neither blocks.
        wait_for(f"batch {batch_id} to pause", lambda b=batch_id: paused(stack, b))
    for batch_id in (first, second):
        answer = stack.approve(batch_id)
        assert answer["approver"] == APPROVER and answer["resumed"], answer
    for batch_id in (first, second):
        [run] = pay_runs(stack, batch_id)
        assert wait_for(f"pay run of {batch_id}", lambda r=run["id"]: final(stack, r)) == (
            "COMPLETED"
        )

    stats = stack.sandbox_stats()
    assert stats["payoutsByExternalId"] == dict.fromkeys(first_ids + second_ids, 1)
    for batch_id, rows in ((first, 3), (second, 4)):
        # The history says who started each run (the schedule) and how it ended.
        ends = wait_for(
            f"the end of {batch_id}'s run in the history",
            lambda b=batch_id: stack.ledger(
                "SELECT actor, detail FROM console_actions WHERE batch_id = %s "
                "AND action = 'pay_finished'",
                b,
            ),
        )
        assert len(ends) == 1 and ends[0][0] == SCHEDULE_ACTOR, ends
        assert ends[0][1].endswith(f"{rows} rows sent, {rows} final, 0 pending (of {rows})")
    for batch_id in (first, second):
        assert (stack.reports / f"{batch_id}-reconciliation.csv").is_file()
        assert (stack.reports / f"{batch_id}-reconciliation.xlsx").is_file()


def test_a_large_batch_is_split_across_both_workers_and_nothing_is_paid_twice(
    stack: Stack,
) -> None:
    stack.inbox.mkdir(exist_ok=True)
    # Five claims of PAYFLOW_CHUNK_SIZE (100) rows: both runs claim one while the sandbox is
    # slow (below), and race for the other three; 2,000 rows proved no more and cost a minute
    # of CPU on the sandbox and in the runs.
    big, big_ids = batch_file(stack.inbox / "large.csv", "e2e-big", BIG, 10_000)
    # A file already paid comes back: its batch is registered, so no new pay run, nothing twice.
    again = stack.inbox / "monday-a-again.csv"
    (stack.inbox / "processed" / "monday-a.csv").rename(again)
    paid_before = stack.sandbox_stats()["payoutsByExternalId"]
    first = batch_id_of(again.read_bytes())
    [first_pay_run] = [run["id"] for run in pay_runs(stack, first)]
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"
    assert [run["id"] for run in pay_runs(stack, first)] == [first_pay_run]
    assert (stack.inbox / "processed" / "monday-a-again.csv").is_file()
    # A second pay run of the same batch: both claim rows from the one ledger.
    stack.deployment_run("pay-batch/pay-batch", "-p", f"batch_id={big}", "--tag", f"batch:{big}")
    wait_for("two paused pay runs", lambda: len(paused(stack, big)) == 2)
    # Each run notices its resume on its own poll (up to 10 s apart). A slow sandbox (its
    # balance checks come before any claim) keeps the first from claiming, or paying everything,
    # before the second is under way; full speed once both have claimed rows.
    set_latency(stack, 8.0)
    assert len(stack.approve(big)["resumed"]) == 2

    def claimers() -> set[str]:
        rows = stack.ledger(
            "SELECT DISTINCT e.status_message FROM status_events e JOIN payouts p "
            "ON p.external_id = e.external_id WHERE p.batch_id = %s AND e.to_state = 'SUBMITTING'",
            big,
        )
        return {r[0] for r in rows}

    wait_for("both pay runs to claim rows", lambda: len(claimers()) == 2)
    set_latency(stack, 0.0)
    runs = pay_runs(stack, big)
    assert len(runs) == 2
    for run in runs:
        assert wait_for("a large pay run", lambda r=run["id"]: final(stack, r), 240) == "COMPLETED"

    # Each payout sent once, by one of the two runs; each run (on its own worker) sent some.
    sent = stack.sandbox_stats()["payoutsByExternalId"]
    assert sent == {**paid_before, **dict.fromkeys(big_ids, 1)}
    claims = stack.ledger(
        "SELECT e.status_message, count(*) FROM status_events e JOIN payouts p "
        "ON p.external_id = e.external_id WHERE p.batch_id = %s AND e.to_state = 'SUBMITTING' "
        "GROUP BY e.status_message",
        big,
    )
    by_pid = {msg.split(":")[1]: n for msg, n in claims}  # "claimed by host:pid:nonce"
    assert sum(by_pid.values()) == BIG and all(n > 0 for n in by_pid.values())
    owners = worker_of_run(stack)
    workers = Counter()
    for run in runs:
        pid = str(stack.api("GET", f"/flow_runs/{run['id']}")["infrastructure_pid"])
        workers[owners[run["id"]]] += by_pid[pid.rpartition(":")[2]]
    assert set(workers) == {"worker-a", "worker-b"} and all(workers.values())
    statuses = stack.ledger(
        "SELECT state, count(*) FROM payouts WHERE batch_id = %s GROUP BY state", big
    )
    assert dict(statuses) == {"COMPLETED": BIG}


CONSOLE_PASSWORD = "correct horse battery"


def add_console_operators(stack: Stack, *operators: tuple[str, str]) -> None:
    """`payflow console add-user NAME --role ROLE` for each (name, role), by a signed-in admin."""
    from support.operators import as_person

    admin = as_person(stack.env, "e2e-admin", "admin")
    for name, role in operators:
        made = subprocess.run(
            [*PAYFLOW, "console", "add-user", name, "--role", role, "--password-stdin"],
            cwd=REPO,
            env=admin,
            input=f"{CONSOLE_PASSWORD}\n",
            capture_output=True,
            text=True,
        )
        assert made.returncode == 0, made.stderr


def console_signed_in(url: str, name: str) -> tuple[httpx.Client, str]:
    """A client of the console at `url` signed in as `name`, and its CSRF token."""
    from console.console_support import csrf_of

    client = httpx.Client(base_url=url, timeout=120)
    form = {"name": name, "password": CONSOLE_PASSWORD}
    form["csrf"] = csrf_of(client.get("/login").text)
    assert client.post("/login", data=form).status_code == 303
    return client, csrf_of(client.get("/upload").text)


def test_console_approval_pays_through_the_deployment_and_records_the_end(
    stack: Stack,
) -> None:
    """With PREFECT_API_URL set, `payflow console` starts the pay-batch deployment on approval;
    the run, in a worker, pays each row once and writes its own end to the console's history."""
    add_console_operators(stack, ("mia-e2e", "maker"), ("carl-e2e", "checker"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    console = start([*PAYFLOW, "console", "--port", str(port)], stack.env, stack.root / "c.log")
    try:
        wait_for("the console", lambda: answers(f"{url}/login"), timeout=120)
        path = stack.root / "console-batch.csv"
        batch_id, ids = batch_file(path, "e2e-console", 6, 50_000)

        maker, maker_csrf = console_signed_in(url, "mia-e2e")
        upload = {"file": (path.name, path.read_bytes(), "text/csv")}
        assert maker.post("/upload", files=upload, data={"csrf": maker_csrf}).status_code == 303
        submitted = maker.post(f"/batches/{batch_id}/submit", data={"csrf": maker_csrf})
        assert submitted.status_code == 303, submitted.text
        checker, checker_csrf = console_signed_in(url, "carl-e2e")
        decision = {"csrf": checker_csrf, "decision": "approve", "note": "e2e"}
        approved = checker.post(
            f"/batches/{batch_id}/approve", data=decision, follow_redirects=True
        )
        assert "started through the Prefect deployment" in approved.text, approved.text

        [run] = wait_for("the console's pay run", lambda: pay_runs(stack, batch_id))
        assert run["parameters"] == {"batch_id": batch_id, "started_by": "carl-e2e"}
        assert wait_for("the pay run", lambda: final(stack, run["id"]), 240) == "COMPLETED"
        ends = wait_for(
            "the run's end in the history",
            lambda: stack.ledger(
                "SELECT actor, detail FROM console_actions WHERE batch_id = %s "
                "AND action = 'pay_finished'",
                batch_id,
            ),
        )
        assert ends == [("carl-e2e", f"run {run['name']}: 6 rows sent, 6 final, 0 pending (of 6)")]
        sent = stack.sandbox_stats()["payoutsByExternalId"]
        assert {i: sent.get(i) for i in ids} == dict.fromkeys(ids, 1)
        page = checker.get(f"/batches/{batch_id}").text
        assert re.search(r'id="state"[^>]*>paid<', page) and "pay finished" in page
    finally:
        stop_group(console)


def test_approving_a_batch_whose_paused_run_died_with_its_worker_starts_a_run_that_pays_it(
    stack: Stack,
) -> None:
    """A worker killed while its run waits for approval: the run still reads Paused. `payflow
    approve` finds it did not go on, marks it crashed, and a run of its deployment pays the
    batch once on the other worker (it said "resumed" and nothing was ever paid)."""
    stack.inbox.mkdir(exist_ok=True)
    batch_id, ids = batch_file(stack.inbox / "tuesday.csv", "e2e-stalled", 3, 70_000)
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"
    [waiting] = wait_for("the batch's pause", lambda: paused(stack, batch_id))
    [pay_run] = pay_runs(stack, batch_id)
    owner = wait_for("the pay run's worker", lambda: worker_of_run(stack).get(pay_run["id"]))
    killed = stack.workers[owner]
    # The machine went down: the worker and the flow run process (a session of its own) die.
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    flow_pid = stack.api("GET", f"/flow_runs/{pay_run['id']}")["infrastructure_pid"]
    os.kill(int(str(flow_pid).rpartition(":")[2]), signal.SIGKILL)
    assert stack.state_of(waiting["id"]) == "PAUSED"  # Prefect cannot tell it died

    answer = stack.approve(batch_id)
    assert answer["resumed"] == [], answer
    [replaced] = answer["replaced"]
    assert replaced["stalled"] == waiting["id"] and replaced["crashed"] == pay_run["id"]
    assert stack.state_of(pay_run["id"]) == "CRASHED"
    assert stack.state_of(waiting["id"]) == "CRASHED"
    successor = replaced["started"]
    assert wait_for("the new pay run", lambda: final(stack, successor), 240) == "COMPLETED"
    new_run = stack.api("GET", f"/flow_runs/{successor}")
    assert new_run["parameters"] == {"batch_id": batch_id, "started_by": SCHEDULE_ACTOR}
    sent = stack.sandbox_stats()["payoutsByExternalId"]
    assert {i: sent.get(i) for i in ids} == dict.fromkeys(ids, 1)
    # The file dropped again: the daily run finds the dead run's successor by the same key,
    # and starts no third run.
    (stack.inbox / "processed" / "tuesday.csv").rename(stack.inbox / "tuesday.csv")
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"
    assert {run["id"] for run in pay_runs(stack, batch_id)} == {pay_run["id"], successor}
    start_worker(stack, owner, stack.root / f"{owner}-restarted.log")


def test_a_file_dropped_again_pays_a_batch_whose_run_died_running_or_paused_and_not_a_live_one(
    stack: Stack,
) -> None:
    """Prefect shows a pay run whose worker died Running (or Paused) for ever, and one resumed
    in its form after that Running with nobody behind it; the file dropped again found it by its
    key and did nothing, so the batch was never paid. Past the heartbeat's window, the daily run
    crashes such a run and a new one pays each row once; a run that beats is left alone."""
    stack.inbox.mkdir(exist_ok=True)
    start_worker(stack, "worker-c", stack.root / "worker-c.log")  # three pay runs wait at once
    files = {"paying": "wed-paying.csv", "paused": "wed-paused.csv", "live": "wed-live.csv"}
    batches, ids = {}, {}
    for n, (name, file) in enumerate(files.items()):
        batches[name], ids[name] = batch_file(
            stack.inbox / file, f"e2e-{name}", 12, 80_000 + n * 100
        )
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"
    runs = {}
    for name, batch_id in batches.items():
        wait_for(f"the {name} batch's pause", lambda b=batch_id: paused(stack, b))
        [runs[name]] = [run["id"] for run in pay_runs(stack, batch_id)]
    [pause] = [run["id"] for run in paused(stack, batches["paused"])]

    # Killed while paying: approved, then SIGKILLed with rows sent and rows being sent.
    set_latency(stack, 1.0)
    assert stack.approve(batches["paying"])["resumed"]

    def sent_and_sending() -> bool:
        states = dict(
            stack.ledger(
                "SELECT state, count(*) FROM payouts WHERE batch_id = %s GROUP BY state",
                batches["paying"],
            )
        )
        sent = sum(states.get(state, 0) for state in ("CREATED", "PROCESSING", "COMPLETED"))
        return sent > 0 and states.get("SUBMITTING", 0) > 0

    wait_for("rows sent and rows being sent", sent_and_sending, timeout=120)
    killed = [kill_worker_and_its_run(stack, runs["paying"])]
    set_latency(stack, 0.0)
    # Killed while paused, then resumed in Prefect's form: Running, with nobody behind it.
    killed.append(kill_worker_and_its_run(stack, runs["paused"]))
    stack.api(
        "POST",
        f"/flow_runs/{pause}/resume",
        {"run_input": {"approve": True}},
    )
    assert wait_for("the resume", lambda: stack.state_of(pause) == "RUNNING", timeout=30)
    # Prefect cannot tell: the killed runs read Running (or, in some placements of runs on
    # workers, Crashed: the daily run replaces either the same way); the live one runs on.
    assert stack.state_of(runs["live"]) == "RUNNING"
    assert {stack.state_of(runs[n]) for n in ("paying", "paused")} <= {"RUNNING", "CRASHED"}
    for name in dict.fromkeys(killed):
        start_worker(stack, name, stack.root / f"{name}-after-kill.log")

    # Past the window (RUN_WINDOW) from each run's start, with the live run still beating.
    starts = [stack.api("GET", f"/flow_runs/{run_id}")["start_time"] for run_id in runs.values()]
    latest = max(datetime.fromisoformat(start) for start in starts)
    time.sleep(max(0.0, (latest + RUN_WINDOW - datetime.now(UTC)).total_seconds()) + 5)
    for file in files.values():
        (stack.inbox / "processed" / file).rename(stack.inbox / file)
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"

    for name in ("paying", "paused"):
        assert stack.state_of(runs[name]) == "CRASHED"
        [new] = [r["id"] for r in pay_runs(stack, batches[name]) if r["id"] != runs[name]]
        runs[name] = new
    assert stack.state_of(pause) == "CRASHED"
    # The live run is the batch's only run, still waiting for its approval.
    assert [r["id"] for r in pay_runs(stack, batches["live"])] == [runs["live"]]
    assert [r["id"] for r in paused(stack, batches["live"])]
    # The answer given in Prefect's form reached nobody: the new run asks again.
    wait_for("the new run's pause", lambda: paused(stack, batches["paused"]))
    for name in ("paused", "live"):
        assert stack.approve(batches[name])["resumed"]
    for name, run_id in runs.items():
        assert wait_for(f"the {name} run", lambda r=run_id: final(stack, r), 240) == "COMPLETED"

    sent = stack.sandbox_stats()["payoutsByExternalId"]
    every = [i for name in files for i in ids[name]]
    assert {i: sent.get(i) for i in every} == dict.fromkeys(every, 1)
    for batch_id in batches.values():
        states = stack.ledger(
            "SELECT state, count(*) FROM payouts WHERE batch_id = %s GROUP BY state", batch_id
        )
        assert dict(states) == {"COMPLETED": 12}


def test_a_rerun_from_its_deployment_is_made_by_its_maker_parameter_who_cannot_approve_it(
    stack: Stack,
) -> None:
    """Found in review: the rerun-failed deployment recorded the worker's user as the rerun
    batch's maker, so whoever started the run could approve the rerun themselves. Its `maker`
    parameter (as the daily deployment's) names the person, whom the two-person rule refuses."""
    stack.inbox.mkdir(exist_ok=True)
    path = stack.inbox / "thursday.csv"
    _, ids = batch_file(path, "e2e-rr", 2, 95_000)
    # The second row's recipient is not found at the service: it fails, to be rerun.
    lines = path.read_text().splitlines()
    requisites = lines[2].split(",")[4]
    lines[2] = lines[2].replace(requisites, requisites[:-4] + "2222")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    batch_id = batch_id_of(path.read_bytes())
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"
    wait_for("the batch's pause", lambda: paused(stack, batch_id))
    assert stack.approve(batch_id)["resumed"]
    [pay_run] = pay_runs(stack, batch_id)
    assert wait_for("the pay run", lambda: final(stack, pay_run["id"]), 240) == "FAILED"

    rerun = stack.deployment_run(
        "rerun-failed/rerun-failed",
        *("-p", f"batch_id={batch_id}", "-p", "all_failed=true", "-p", "reviewed=true"),
        *("-p", "maker=mia-rerun"),
    )

    def rerun_batch() -> list[tuple[Any, ...]]:
        return stack.ledger("SELECT batch_id, made_by FROM batches WHERE rerun_of = %s", batch_id)

    [(rerun_id, made_by)] = wait_for("the rerun batch", rerun_batch)
    assert made_by == "mia-rerun"  # the parameter's claim: nobody signed in
    wait_for("the rerun's pause", lambda: paused(stack, rerun_id))

    def as_person(name: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*PAYFLOW, *args],
            cwd=REPO,
            env={**stack.env, **stack.person(name)},
            capture_output=True,
            text=True,
        )

    early = as_person(APPROVER, "approve", rerun_id)
    assert early.returncode == 2 and "has no signed-in maker" in early.stderr, early
    with Ledger.open(stack.ledger_url) as ledger:
        add_people(ledger, **{"mia-rerun": "maker,checker"})
    assert as_person("mia-rerun", "submit", rerun_id).returncode == 0
    own = as_person("mia-rerun", "approve", rerun_id)
    assert own.returncode == 2 and f"mia-rerun made batch {rerun_id}" in own.stderr, own
    assert stack.approve(rerun_id, submit=False)["resumed"]
    assert wait_for("the rerun run", lambda: final(stack, rerun), 240)
    sent = stack.sandbox_stats()["payoutsByExternalId"]
    assert sent[ids[1]] == 1 and sent[f"{ids[1]}-r1"] == 1


def test_a_checker_approving_in_the_console_resumes_the_daily_run_waiting_for_it(
    stack: Stack,
) -> None:
    """Found in review: "Approve and pay" on a batch whose daily pay run waits paused for its
    approval started a second pay run beside it: its form asks the checker's acknowledgement of
    the batch's warning, the console's resume left it out and was refused, and a new run was
    started. The approval is recorded, the waiting run resumed; no other run. The daily run's
    `maker` parameter names nobody signed in, so the maker submits the waiting batch in the
    console (it was refused as "already submitted"), then the checker approves it there."""
    maker_name, checker_name = "mia-paused", "carl-paused"
    add_console_operators(stack, (maker_name, "maker"), (checker_name, "checker"))
    stack.inbox.mkdir(exist_ok=True)
    # Two rows paying one recipient the same amount: a likely double payment, a warning.
    twins = "".join(f"e2e-twin-{n},1500,XOF,SIM,2250799990001,Kouadio Yao,u-{n}\n" for n in (1, 2))
    path = stack.inbox / "friday.csv"
    path.write_text(HEADER + twins, encoding="utf-8")
    batch_id = batch_id_of(path.read_bytes())
    daily = stack.deployment_run("daily-payouts/daily-payouts", "-p", f"maker={maker_name}")
    assert wait_for("the daily run", lambda: final(stack, daily)) == "COMPLETED"
    [waiting] = wait_for("the batch's pause", lambda: paused(stack, batch_id))
    assert waiting["parameters"]["warnings"] is True  # its form asks for the acknowledgement
    [pay_run] = pay_runs(stack, batch_id)

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    console = start([*PAYFLOW, "console", "--port", str(port)], stack.env, stack.root / "c3.log")
    try:
        wait_for("the console", lambda: answers(f"{url}/login"), timeout=120)
        maker, maker_csrf = console_signed_in(url, maker_name)
        submitted = maker.post(
            f"/batches/{batch_id}/submit", data={"csrf": maker_csrf}, follow_redirects=True
        )
        # The deployed run's maker parameter named nobody signed in: the maker submits it here.
        assert "already submitted" not in submitted.text, submitted.text
        checker, checker_csrf = console_signed_in(url, checker_name)
        assert "awaiting approval" in checker.get(f"/batches/{batch_id}").text
        page = checker.get(f"/batches/{batch_id}/approve").text
        assert "Approve and pay" in page and "likely double payment" in page
        decision = {"csrf": checker_csrf, "decision": "approve", "acknowledge": "yes"}
        approved = checker.post(
            f"/batches/{batch_id}/approve", data=decision, follow_redirects=True
        )
        assert f"paused payout run {waiting['id']} was resumed" in approved.text, approved.text

        assert wait_for("the pay run", lambda: final(stack, pay_run["id"]), 240) == "COMPLETED"
        assert [run["id"] for run in pay_runs(stack, batch_id)] == [pay_run["id"]]
        assert stack.state_of(waiting["id"]) == "COMPLETED"
        records = stack.ledger(
            "SELECT approver, via FROM approvals WHERE batch_id = %s ORDER BY id", batch_id
        )
        assert records == [(checker_name, "console")]
        actions = stack.ledger(
            "SELECT actor, action FROM console_actions WHERE batch_id = %s ORDER BY id", batch_id
        )
        assert (checker_name, "pay_resumed") in actions
        assert not [a for a in actions if a[1] == "pay_started"], actions
        sent = stack.sandbox_stats()["payoutsByExternalId"]
        assert {i: sent.get(i) for i in ("e2e-twin-1", "e2e-twin-2")} == {
            "e2e-twin-1": 1,
            "e2e-twin-2": 1,
        }
    finally:
        stop_group(console)
