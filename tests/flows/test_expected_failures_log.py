"""What a worker's terminal shows when a run ends Failed for a reason the operator acts on (an
unreadable inbox file, a declined batch, rows not all paid): one line each, no traceback. An
unexpected error keeps its traceback.

The flows run through `prefect.flow_engine.run_flow` with an `error_logger`, as a process
worker's flow-run process calls it: that is where Prefect adds "Engine execution exited with
unexpected exception" and the traceback of a run that ended Failed."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest
from paying_support import register, row
from prefect.flow_engine import run_flow

from payflow.approvals import record_decision
from payflow.expected import OneLineForExpected
from payflow.flows.approval import NotApproved
from payflow.flows.daily_inbox import InboxFilesFailed, daily_payouts
from payflow.flows.links import payout_links
from payflow.flows.pay_batch import NotAllPaid, pay_batch, pay_result
from payflow.flows.refund_batch import refund_batch
from payflow.intake.problems import BatchFileError
from payflow.ledger import Ledger
from payflow.settings import SANDBOX_TOKEN_DEFAULT


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self) -> str:
        return "\n".join(r.getMessage() for r in self.records)


@pytest.fixture
def run_log() -> Iterator[Records]:
    """Every record Prefect's run loggers emit during the test, as their handlers get it; with
    no filter installed yet (a flow of an earlier test in this process installed it), so the
    flow under test must install it itself."""
    handler = Records()
    loggers = [logging.getLogger(n) for n in ("prefect.flow_runs", "prefect.task_runs")]
    for logger in loggers:
        for installed in [f for f in logger.filters if isinstance(f, OneLineForExpected)]:
            logger.removeFilter(installed)
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


def as_a_worker_runs_it(flow, **parameters):
    """Run `flow` as a worker's flow-run process does; what it raised, if anything."""
    try:
        run_flow(flow, parameters=parameters, error_logger=logging.getLogger("prefect.flow_runs"))
    except Exception as exc:
        return exc
    return None


def tracebacks(log: Records) -> list[str]:
    return [r.getMessage() for r in log.records if r.exc_info]


def test_an_unreadable_inbox_file_ends_the_daily_run_failed_in_one_line(
    prefect_api, make_sandbox, tmp_path, monkeypatch, run_log
):
    sandbox = make_sandbox()
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", SANDBOX_TOKEN_DEFAULT)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "garbage.csv").write_bytes(b"hello\x00world")

    raised = as_a_worker_runs_it(daily_payouts, inbox=str(inbox), quiet_seconds=0)

    # The worker's terminal showed three tracebacks: the read task's, the intake subflow's and
    # the daily run's, and once more "Engine execution exited with unexpected exception".
    assert tracebacks(run_log) == []
    assert isinstance(raised, InboxFilesFailed)
    assert "unexpected exception" not in run_log.lines()
    assert "garbage.csv is neither CSV nor XLSX" in run_log.lines()
    assert "1 of 1 inbox files not paid: garbage.csv" in run_log.lines()


def test_a_declined_batch_and_a_batch_not_all_paid_end_failed_in_one_line(
    prefect_api, sandbox, tmp_path, run_log
):
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        declined = register(ledger, [row("declined-1", 2)])
        ledger.set_maker(declined, "alice")
        record_decision(ledger, declined, approver="bob", decision="decline", note="wrong day")
        unpaid = register(ledger, [row("unpaid-1", 2), row("unpaid-2", 3, last4="3333")])
        options = {
            "api_url": sandbox.url,
            "sandbox": True,
            "ledger_url": ledger.url,
            "out_dir": str(tmp_path / "reports"),
            "poll_interval": 0.3,
        }

        stopped = as_a_worker_runs_it(pay_batch, batch_id=declined, **options)
        not_all = as_a_worker_runs_it(pay_batch, batch_id=unpaid, **options)

    assert isinstance(stopped, NotApproved)
    # It raised a TypeError over the PayResult, logged with its traceback as "unexpected".
    assert isinstance(not_all, NotAllPaid)
    assert not_all.result.counts.by_state == {"COMPLETED": 1, "CANCELED": 1}
    assert tracebacks(run_log) == []
    assert "unexpected exception" not in run_log.lines()
    assert "declined by bob (wrong day)" in run_log.lines()
    # The run's artifact says how the batch ended and what to do next, as `payflow status` does.
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        ends = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["batch-end"]))
        )
    assert any(
        f"Batch {declined}: declined." in str(a.data) and "new externalIds" in str(a.data)
        for a in ends
    ), ends


def test_an_unreadable_refund_file_and_links_file_end_failed_in_one_line(
    prefect_api, sandbox, tmp_path, monkeypatch, run_log
):
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"hello\x00world")
    out = str(tmp_path / "reports")

    refunds = as_a_worker_runs_it(
        refund_batch, path=str(garbage), out_dir=out, api_url=sandbox.url, sandbox=True
    )
    links = as_a_worker_runs_it(payout_links, source=str(garbage), out_dir=out)
    report = as_a_worker_runs_it(payout_links, source="no-such-batch", action="report")

    # Neither flow installed the filter: each failure showed its traceback twice (the task's,
    # the flow's) and once more as "Engine execution exited with unexpected exception".
    assert isinstance(refunds, BatchFileError), refunds
    assert isinstance(links, BatchFileError), links
    assert isinstance(report, BatchFileError), report
    assert tracebacks(run_log) == []
    assert "unexpected exception" not in run_log.lines()
    assert "garbage.csv is neither CSV nor XLSX" in run_log.lines()
    assert "no links batch no-such-batch in the ledger" in run_log.lines()


def test_in_this_process_a_run_not_all_paid_still_gives_its_result(sandbox, tmp_path, prefect_api):
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        batch_id = register(ledger, [row("half-1", 2), row("half-2", 3, last4="3333")])
        state = pay_batch(
            batch_id,
            api_url=sandbox.url,
            sandbox=True,
            ledger_url=ledger.url,
            out_dir=str(tmp_path / "reports"),
            poll_interval=0.3,
            return_state=True,
        )
    assert state.is_failed()
    assert pay_result(state).counts.by_state == {"COMPLETED": 1, "CANCELED": 1}


def test_an_unexpected_error_keeps_its_traceback():
    def record_of(exc: Exception, message: str) -> logging.LogRecord:
        try:
            raise exc
        except Exception:
            info = sys.exc_info()
            return logging.LogRecord("prefect.flow_runs", 40, __file__, 1, message, (), info)

    quiet = OneLineForExpected()
    unexpected = record_of(RuntimeError("ledger down"), "Encountered exception during execution")
    assert quiet.filter(unexpected) and unexpected.exc_info is not None
    engine = record_of(RuntimeError("x"), "Engine execution exited with unexpected exception")
    assert quiet.filter(engine) and engine.exc_info is not None
    expected = record_of(BatchFileError("a.csv is neither CSV nor XLSX"), "Encountered ...")
    assert quiet.filter(expected) and expected.exc_info is None
    again = record_of(BatchFileError("a"), "Engine execution exited with unexpected exception")
    assert not quiet.filter(again)


def test_an_approval_pause_that_timed_out_is_one_line_without_its_traceback():
    # The pay run's approval subflow logged FlowPauseTimeout's whole traceback in the worker's
    # log, before the run ended in one line ("no answer within ... s; nothing was paid").
    from prefect.exceptions import FlowPauseTimeout

    try:
        raise FlowPauseTimeout("Flow run was paused and never resumed.")
    except FlowPauseTimeout:
        record = logging.LogRecord(
            "prefect.flow_runs", logging.ERROR, __file__, 1, "Encountered exception", (),
            sys.exc_info(),
        )  # fmt: skip
    assert OneLineForExpected().filter(record) is True
    assert record.exc_info is None and record.getMessage() == "Encountered exception"
    try:
        raise ValueError("a bug")
    except ValueError:
        bug = logging.LogRecord(
            "prefect.flow_runs", logging.ERROR, __file__, 1, "x", (), sys.exc_info()
        )
    assert OneLineForExpected().filter(bug) is True and bug.exc_info is not None
