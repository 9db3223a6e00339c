"""The daily run's inbox: a file leaves only once its batch is in the ledger and its pay run
exists; a broken file goes to `failed/` with its note; the others are not held up."""

from __future__ import annotations

import asyncio
import getpass
import os
import pwd
import threading
import time
from datetime import timedelta
from functools import partial
from typing import Any
from uuid import UUID

import pytest
from prefect import tags, task
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterKey,
    FlowRunFilter,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import State
from prefect.client.schemas.sorting import ArtifactSort, FlowRunSort
from prefect.states import Crashed, Failed, Paused, Running
from support.beats import at_past, dead_run_id, elsewhere_run_id
from support.operators import PASSWORD, actor, add_people

from payflow.acts import decide
from payflow.approvals import ApprovalRefused, record_decision
from payflow.approvals.identity import current_user, file_maker_note, worker_account_note
from payflow.approvals.resume import batch_tag
from payflow.approvals.store import terms_of
from payflow.connections import RunTarget
from payflow.console.context import ConsoleContext
from payflow.console.deployed import start_through_prefect
from payflow.console.operators import add_operator
from payflow.flows.approval import await_approval
from payflow.flows.daily_inbox import InboxFilesFailed, daily_payouts
from payflow.flows.pay_batch import pay_batch
from payflow.inbox import (
    InboxOutcome,
    Settled,
    inbox_files,
    inbox_markdown,
    settle_file,
    still_written,
)
from payflow.intake import batch_id_of
from payflow.ledger import Ledger
from payflow.ledger.run_beats import beat, end_beats
from payflow.paying.run_end import NOT_ALL_PAID
from payflow.settings import Settings
from payflow.tasks.inbox import LEFT_BEHIND, start_pay_run

GOOD = """externalId,amount,currency,paymentType,requisites,name,userId
inbox-1,1000,XOF,SIM,2250700000101,Kouadio Yao,u-1
"""


def test_inbox_files_are_the_batch_files_at_the_top_oldest_first(tmp_path):
    for name, mtime in (("b.csv", 20), ("a.XLSX", 30), ("c.csv", 10), ("notes.txt", 5)):
        (tmp_path / name).write_text("x")
        os.utime(tmp_path / name, (mtime, mtime))
    (tmp_path / "processed").mkdir()
    (tmp_path / "processed" / "old.csv").write_text("x")

    assert [p.name for p in inbox_files(tmp_path)] == ["c.csv", "b.csv", "a.XLSX"]


def test_a_failed_file_gets_its_note_and_a_second_file_of_the_same_name_keeps_both(tmp_path):
    for content in ("first", "second"):
        (tmp_path / "pay.csv").write_text(content)
        settle_file(tmp_path / "pay.csv", Settled.FAILED, f"{content} was broken")

    failed = tmp_path / "failed"
    assert sorted(p.name for p in failed.iterdir()) == [
        "pay-2.csv",
        "pay-2.csv.why.txt",
        "pay.csv",
        "pay.csv.why.txt",
    ]
    assert (failed / "pay-2.csv").read_text() == "second"
    assert (failed / "pay-2.csv.why.txt").read_text() == "second was broken\n"
    assert not (tmp_path / "pay.csv").exists()


def test_a_file_left_for_the_next_run_does_not_move(tmp_path):
    (tmp_path / "pay.csv").write_text("x")
    assert settle_file(tmp_path / "pay.csv", Settled.LEFT) == tmp_path / "pay.csv"
    assert (tmp_path / "pay.csv").exists()
    assert "No new files" in inbox_markdown(tmp_path, [])


def _settings_for_a_sandbox(sandbox, tmp_path, monkeypatch) -> str:
    """Point payflow's settings at `sandbox` and a ledger file of the test; the ledger URL."""
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", sandbox.token)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", ledger_url)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    return ledger_url


def test_a_file_whose_pay_run_cannot_start_stays_in_the_inbox_and_a_broken_one_fails(
    prefect_api, make_sandbox, tmp_path, monkeypatch
):
    ledger_url = _settings_for_a_sandbox(make_sandbox(), tmp_path, monkeypatch)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "good.csv").write_text(GOOD, encoding="utf-8")
    (inbox / "broken.csv").write_text("who,what\nx,y\n", encoding="utf-8")

    # No such deployment: the batch is registered, but without its pay run the file stays.
    with pytest.raises(InboxFilesFailed, match="2 of 2 inbox files not paid"):
        daily_payouts(str(inbox), pay_deployment="no-such-flow/no-such-deployment", quiet_seconds=0)

    assert [p.name for p in inbox_files(inbox)] == ["good.csv"]
    with Ledger.open(ledger_url) as ledger:
        assert ledger.batch_exists(batch_id_of(GOOD.encode()))
    # good.csv is the worker's own file and no maker was given: its batch is made by the
    # worker's account, and the run's summary says that names nobody.
    summary = asyncio.run(_latest_markdown("daily-payouts"))
    assert f"- good.csv: {worker_account_note(current_user(Settings()))}" in summary.splitlines()
    note = (inbox / "failed" / "broken.csv.why.txt").read_text(encoding="utf-8")
    assert "broken.csv" in note
    assert not (inbox / "processed").exists()


def test_a_file_renamed_beside_an_older_one_of_its_name_is_named_where_it_went(
    prefect_api, make_sandbox, tmp_path, monkeypatch
):
    # The summary said "failed" (or "processed"), and failed/broken.csv was yesterday's file:
    # today's was failed/broken-2.csv, which nothing named.
    _settings_for_a_sandbox(make_sandbox(), tmp_path, monkeypatch)
    inbox = tmp_path / "inbox"
    (inbox / "failed").mkdir(parents=True)
    (inbox / "failed" / "broken.csv").write_text("yesterday's\n", encoding="utf-8")
    (inbox / "broken.csv").write_text("who,what\nx,y\n", encoding="utf-8")

    with pytest.raises(InboxFilesFailed, match=r"1 of 1 inbox files not paid: broken\.csv"):
        daily_payouts(str(inbox), pay_deployment="no-such-flow/no-such-deployment", quiet_seconds=0)

    assert (inbox / "failed" / "broken-2.csv").read_text(encoding="utf-8") == "who,what\nx,y\n"
    summary = asyncio.run(_latest_markdown("daily-payouts"))
    assert "| broken.csv | failed/broken-2.csv |  |  | broken.csv: " in summary


async def _latest_markdown(key: str) -> str:
    """The newest version of the artifact `key` on the test's Prefect server."""
    async with get_client() as client:
        [artifact] = await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])),
            sort=ArtifactSort.CREATED_DESC,
            limit=1,
        )
    return str(artifact.data)


def test_a_daily_batch_made_by_the_workers_own_account_says_it_is_not_a_person(tmp_path):
    # The rerun-failed deployment said so and the daily run did not: a transfer job's copy
    # dropped without `maker` was made by the worker's account, and its summary said nothing.
    mine = tmp_path / "copied.csv"
    mine.write_text(GOOD, encoding="utf-8")
    # PAYFLOW_USER names nobody: the note names the worker's own OS account.
    settings = Settings(user="svc-payflow")
    account = getpass.getuser()

    assert file_maker_note(mine, settings) == worker_account_note(account)
    assert file_maker_note(mine, settings, "  ") == worker_account_note(account)
    assert file_maker_note(mine, settings, "mia") is None
    outcomes = [
        InboxOutcome("copied.csv", Settled.PROCESSED, "b1", "r1", maker_note="not a person"),
        InboxOutcome("other.csv", Settled.PROCESSED, "b2", "r2"),
    ]
    assert inbox_markdown(tmp_path, outcomes).splitlines()[-2:] == [
        "",
        "- copied.csv: not a person",
    ]
    if os.geteuid() == 0:  # handing a file to another OS user needs root
        os.chown(mine, pwd.getpwnam("daemon").pw_uid, -1)
        assert file_maker_note(mine, settings) is None  # dropped by daemon, an OS account


def _append_rows(path, rows: int, every: float) -> threading.Thread:
    """Write a batch into `path` a row at a time, as a slow copy into the inbox would."""

    def write() -> None:
        with path.open("a", encoding="utf-8") as handle:
            for n in range(rows):
                handle.write(f"slow-{n},{1000 + 5 * n},XOF,SIM,22507000{n:05d},Awa Kone,u-{n}\n")
                handle.flush()
                time.sleep(every)

    path.write_text("externalId,amount,currency,paymentType,requisites,name,userId\n")
    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_file_still_being_written_is_waited_for_and_one_that_never_stops_is_left(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text("x")
    os.utime(old, (1000, 1000))
    slow = tmp_path / "slow.csv"
    writer = _append_rows(slow, 12, 0.1)
    started = time.monotonic()
    assert still_written([old, slow], quiet_seconds=0.5, max_wait_seconds=20) == []
    assert time.monotonic() - started >= 1.0  # it waited for the writer
    writer.join()

    endless = tmp_path / "endless.csv"
    writer = _append_rows(endless, 40, 0.1)
    assert still_written([old, endless], quiet_seconds=0.5, max_wait_seconds=1) == [endless]
    writer.join()


def test_the_daily_run_registers_every_row_of_a_file_copied_in_while_it_runs(
    prefect_api, make_sandbox, tmp_path, monkeypatch
):
    # The file was taken half-written and moved to processed/: 135 of its 200 rows were never
    # registered, and nothing said so.
    ledger_url = _settings_for_a_sandbox(make_sandbox(), tmp_path, monkeypatch)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    writer = _append_rows(inbox / "upload.csv", 15, 0.1)
    with pytest.raises(InboxFilesFailed, match="1 of 1 inbox files not paid"):
        daily_payouts(
            str(inbox), pay_deployment="no-such-flow/no-such-deployment", quiet_seconds=0.6
        )
    writer.join()

    content = (inbox / "upload.csv").read_bytes()
    with Ledger.open(ledger_url) as ledger:
        counts = ledger.batch_counts(batch_id_of(content))
    assert counts.rows == 15


async def _deploy_pay_batch() -> None:
    async with get_client() as client:
        flow_id = await client.create_flow(pay_batch)
        await client.create_deployment(
            flow_id=flow_id,
            name="pay-batch",
            entrypoint="flows/pay_batch.py:pay_batch",
            parameter_openapi_schema=pay_batch.parameters.model_dump(),
        )


async def _end_run(run_id: str, state: State[Any]) -> None:
    async with get_client() as client:
        await client.set_flow_run_state(UUID(run_id), state, force=True)


def test_a_file_dropped_again_after_its_pay_run_crashed_starts_a_new_one_once(prefect_api):
    # The idempotency key returned the crashed run: the file dropped again "did nothing", and the
    # batch's rows stayed unpaid with nothing saying so.
    start = start_pay_run.fn  # the task's function: no flow run around it here
    asyncio.run(_deploy_pay_batch())
    first = start("pay-batch/pay-batch", "crash-1")
    assert start("pay-batch/pay-batch", "crash-1") == first  # not ended: the same run
    asyncio.run(_end_run(first, Crashed()))
    second = start("pay-batch/pay-batch", "crash-1")
    assert second != first
    assert start("pay-batch/pay-batch", "crash-1") == second  # and only one new run


@task(name="await-approval")
def _call() -> None:
    """The task run a subflow call stands on."""


async def _left_running(run_id: str) -> str:
    """Show the pay run Running, waiting in a Paused approval subflow (as a run whose worker
    died reads); the subflow's id."""
    async with get_client() as client:
        await client.set_flow_run_state(UUID(run_id), Running(), force=True)
        # A subflow's parent is a task run standing for the call (Prefect makes one too).
        task_run = await client.create_task_run(_call, flow_run_id=UUID(run_id), dynamic_key="0")
        subflow = await client.create_flow_run(
            await_approval, parent_task_run_id=task_run.id, state=Paused()
        )
        return str(subflow.id)


async def _state_of(run_id: str) -> tuple[str, str | None]:
    async with get_client() as client:
        state = (await client.read_flow_run(UUID(run_id))).state
    assert state is not None
    return state.type.value, state.message


def _ledger_of_the_test(tmp_path, monkeypatch) -> Ledger:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", url)
    return Ledger.open(url)


# Prefect sets a run's start time itself: the tests judge with a window of seconds instead.
WINDOW = timedelta(seconds=3)
PAY = "pay-batch/pay-batch"


def _left_past_the_window(*batch_ids: str) -> list[tuple[str, str]]:
    """Each batch's pay run, left Running in a Paused subflow for longer than `WINDOW`; (run,
    pause) ids."""
    asyncio.run(_deploy_pay_batch())
    runs = [start_pay_run.fn(PAY, batch_id) for batch_id in batch_ids]
    pauses = [asyncio.run(_left_running(run)) for run in runs]
    time.sleep(WINDOW.total_seconds() + 0.5)
    return list(zip(runs, pauses, strict=True))


def test_a_pay_run_left_running_with_no_heartbeat_is_crashed_and_paid_by_one_new_run(
    prefect_api, tmp_path, monkeypatch
):
    # A run whose worker died reads Running (or Paused) for ever; the key returned it, so the
    # file dropped again did nothing and the batch was never paid.
    start = partial(start_pay_run.fn, stale_after=WINDOW)
    with _ledger_of_the_test(tmp_path, monkeypatch) as ledger:
        [(first, pause)] = _left_past_the_window("silent-1")
        # Its last beat, 10 s ago, of a run that keeps the test's window: stale. A fresh beat
        # whose process is gone is no one either.
        beat(at_past(ledger, 10), elsewhere_run_id(), "silent-1", "flow run calm-owl", WINDOW)
        beat(ledger, dead_run_id(), "silent-1", "flow run calm-owl")
        second = start(PAY, "silent-1")
    assert second != first
    assert asyncio.run(_state_of(first)) == ("CRASHED", LEFT_BEHIND)
    # Its approval pause too: nobody resumes it into a run with nothing behind it.
    assert asyncio.run(_state_of(pause)) == ("CRASHED", LEFT_BEHIND)
    assert start(PAY, "silent-1") == second  # and only one new run


def test_a_pay_run_that_beats_or_has_just_started_is_never_replaced(
    prefect_api, tmp_path, monkeypatch
):
    start = partial(start_pay_run.fn, stale_after=WINDOW)
    with _ledger_of_the_test(tmp_path, monkeypatch) as ledger:
        [(beating, pause), (ending, _), (young, _)] = _left_past_the_window(
            "beating-1", "ending-1", "young-1"
        )
        # Beating (from another host): alive, paused or paying.
        beat(ledger, elsewhere_run_id(), "beating-1", "flow run calm-owl")
        assert start(PAY, "beating-1") == beating
        assert asyncio.run(_state_of(beating))[0] == "RUNNING"
        assert asyncio.run(_state_of(pause))[0] == "PAUSED"
        # A run that just ended its beat is finishing: Prefect reads it final in a moment.
        beat(ledger, "worker-8.example:1:feed0001", "ending-1", "flow run quick-fox")
        end_beats(ledger, "worker-8.example:1:feed0001")
        assert start(PAY, "ending-1") == ending
    # No beat, Running for less than a minute (the default window): it may still be starting.
    assert start_pay_run.fn(PAY, "young-1") == young
    assert asyncio.run(_state_of(young))[0] == "RUNNING"


def test_a_file_dropped_again_after_its_pay_run_ran_to_its_end_unpaid_starts_no_new_one(
    prefect_api,
):
    # A run that paid what it could ends Failed "Not all paid": what is left needs a person
    # (a rerun after reading the statusMessage), not another run.
    start = start_pay_run.fn
    asyncio.run(_deploy_pay_batch())
    first = start("pay-batch/pay-batch", "ended-1")
    asyncio.run(_end_run(first, Failed(name=NOT_ALL_PAID, message="1 of 2 rows not paid")))
    assert start("pay-batch/pay-batch", "ended-1") == first


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another OS user needs root")
def test_a_dropped_files_maker_is_its_owner_who_then_cannot_approve_it(
    prefect_api, make_sandbox, tmp_path, monkeypatch
):
    # The maker of every daily batch was the worker's OS user (root, the service account), so
    # the person who dropped the file could approve it: the two-person rule compared nobody.
    ledger_url = _settings_for_a_sandbox(make_sandbox(), tmp_path, monkeypatch)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    dropped = inbox / "daemon.csv"
    big = GOOD.replace("inbox-1,1000", "inbox-1,2000000")  # one approval step
    dropped.write_text(big, encoding="utf-8")
    os.chown(dropped, pwd.getpwnam("daemon").pw_uid, -1)
    # A file the worker's own user owns (a transfer job's copy): the deployment's maker.
    copied = inbox / "copied.csv"
    copied.write_text(big.replace("inbox-1", "inbox-2"), encoding="utf-8")
    # The daemon account is dora's: the operators store maps an OS account to a person.
    with Ledger.open(ledger_url) as ledger:
        add_people(ledger, carl="checker")
        add_operator(ledger, "dora", "maker", PASSWORD, os_account="daemon")

    with pytest.raises(InboxFilesFailed):  # no pay deployment here: the batches stay registered
        daily_payouts(str(inbox), pay_deployment="no-such/deployment", quiet_seconds=0, maker="mia")

    with Ledger.open(ledger_url) as ledger:
        made = {
            name: ledger.batch_facts(batch_id_of((inbox / name).read_bytes())).made_by
            for name in ("daemon.csv", "copied.csv")
        }
        # The dropped file is dora's batch; the copy's `maker` parameter is only a claim.
        assert made == {"daemon.csv": "dora", "copied.csv": "mia"}
        batch_id, copy_id = batch_id_of(dropped.read_bytes()), batch_id_of(copied.read_bytes())
        assert terms_of(ledger, batch_id).maker == "dora"  # type: ignore[union-attr]
        assert terms_of(ledger, copy_id).maker is None  # type: ignore[union-attr]
        with pytest.raises(ApprovalRefused, match="dora made batch"):
            record_decision(ledger, batch_id, approver="dora", decision="approve")
        with pytest.raises(ApprovalRefused, match="has no signed-in maker"):
            decide(ledger, copy_id, actor(ledger, "carl"), approve=True, via="cli")
        decide(ledger, batch_id, actor(ledger, "carl"), approve=True, via="cli")


def _console_on(ledger: Ledger, tmp_path) -> ConsoleContext:
    """A console paying through the test's pay-batch deployment (no page served: the function
    behind "Approve and pay" is called as the page calls it)."""
    settings = Settings(ledger_url=ledger.url, home=tmp_path / "home")
    target = RunTarget("http://127.0.0.1:9", ledger.url, True, None)
    return ConsoleContext(settings, ledger, target, pay_through_prefect=True)


async def _deployed_runs(batch_id: str) -> list[str]:
    """Ids of the batch's pay runs made from a deployment, oldest first."""
    query = FlowRunFilter(tags=FlowRunFilterTags(all_=[batch_tag(batch_id)]))
    async with get_client() as client:
        runs = await client.read_flow_runs(flow_run_filter=query, sort=FlowRunSort.START_TIME_ASC)
    return [str(r.id) for r in sorted(runs, key=lambda r: r.created) if r.deployment_id]


def test_the_console_finds_the_daily_runs_pay_run_by_its_key_instead_of_starting_a_second(
    prefect_api, tmp_path, monkeypatch
):
    # Found in review: the console looked for the batch's paused run, found none (the daily
    # run's pay run had not paused yet, or waited for a worker) and started a second pay run
    # beside it: rows are claimed, so nothing was paid twice, but the other woke later.
    asyncio.run(_deploy_pay_batch())
    with _ledger_of_the_test(tmp_path, monkeypatch) as ledger:
        ctx = _console_on(ledger, tmp_path)
        daily = start_pay_run.fn(PAY, "key-1")  # waiting for a worker
        told = start_through_prefect(ctx, "key-1", "carl", False)
        assert "started by schedule:daily-payouts) pays it by this approval" in told
        assert asyncio.run(_deployed_runs("key-1")) == [daily]

        # Its first pay run crashed and the daily run made its successor: the console finds
        # that one, by the dead run's key, not the crashed one nor a third.
        first = start_pay_run.fn(PAY, "key-2")
        asyncio.run(_end_run(first, Crashed()))
        second = start_pay_run.fn(PAY, "key-2")
        start_through_prefect(ctx, "key-2", "carl", False)
        assert asyncio.run(_deployed_runs("key-2")) == [first, second]

        # A run that ran to its end left rows: the daily run leaves it be, while a checker going
        # on gets one successor of it, which a second "go on" finds rather than doubling.
        ended = start_pay_run.fn(PAY, "key-3")
        asyncio.run(_end_run(ended, Failed(name=NOT_ALL_PAID, message="1 row not final")))
        told = start_through_prefect(ctx, "key-3", "carl", False)
        assert "started through the Prefect deployment" in told
        start_through_prefect(ctx, "key-3", "carl", False)
        assert start_pay_run.fn(PAY, "key-3") == ended
        assert len(asyncio.run(_deployed_runs("key-3"))) == 2


def test_the_console_resumes_the_daily_pay_run_that_pauses_just_after_it_looked(
    prefect_api, tmp_path, monkeypatch
):
    asyncio.run(_deploy_pay_batch())
    with _ledger_of_the_test(tmp_path, monkeypatch) as ledger:
        ctx = _console_on(ledger, tmp_path)
        daily = start_pay_run.fn(PAY, "late-1")
        asyncio.run(_end_run(daily, Running()))  # read the ledger before the approval

        answers: dict[str, object] = {}

        def pause_a_moment_later() -> None:
            time.sleep(2)  # after the console looked for a paused run and found none
            with tags(batch_tag("late-1")):
                answers["answer"] = await_approval("late-1", "the form", 120, False, 1)

        pausing = threading.Thread(target=pause_a_moment_later, daemon=True)
        pausing.start()
        told = start_through_prefect(ctx, "late-1", "carl", False)
        pausing.join(timeout=60)

        assert told.startswith("the batch's paused payout run") and "was resumed" in told
        answer = answers["answer"]
        # The console recorded carl's approval itself: its resume carries no name, no code.
        assert answer.approve is True and answer.approval_code == ""
        assert asyncio.run(_deployed_runs("late-1")) == [daily]  # no second pay run


def test_going_on_at_once_after_a_pay_run_died_on_this_host_starts_its_successor(
    prefect_api, tmp_path, monkeypatch
):
    # Prefect still shows the dead run Running, and it started under a minute ago: found by its
    # key it was "too young to judge", so "Go on paying" waited 30 s and started nothing.
    asyncio.run(_deploy_pay_batch())
    with _ledger_of_the_test(tmp_path, monkeypatch) as ledger:
        ctx = _console_on(ledger, tmp_path)
        start_through_prefect(ctx, "died-1", "carl", False)
        [first] = asyncio.run(_deployed_runs("died-1"))
        asyncio.run(_end_run(first, Running()))
        beat(ledger, dead_run_id(), "died-1", "flow run calm-owl")  # its process is gone

        told = start_through_prefect(ctx, "died-1", "carl", False)

        assert "started through the Prefect deployment" in told
        [again, second] = asyncio.run(_deployed_runs("died-1"))
        assert again == first and second != first
        assert asyncio.run(_state_of(first))[0] == "CRASHED"
