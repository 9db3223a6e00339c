"""A pay run that waits for final statuses names what it waits for (the payouts, how long each
went without news, when it stops waiting); past its deadline it ends "Not all paid", says who
follows the payouts, and tells the maker through PAYFLOW_NOTIFY. A run sat at "final 30/31" for
15 minutes with no word of which row or until when."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from paying_support import register, row
from prefect.flow_engine import run_flow
from support.receivers import JsonSink
from support.waiting import wait_until

from payflow.flows.pay_batch import NotAllPaid, pay_batch
from payflow.ledger import Ledger


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def run_lines() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("prefect.flow_runs")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture
def hook() -> Iterator[JsonSink]:
    sink = JsonSink()
    yield sink
    sink.close()


def test_tracking_names_the_payouts_it_waits_for_and_its_deadline_then_tells_the_maker(
    prefect_api, make_sandbox, tmp_path, monkeypatch, run_lines, hook
):
    slow = make_sandbox(final_delay=120)  # payouts stay PROCESSING past the run's deadline
    monkeypatch.setenv("PAYFLOW_NOTIFY", hook.url)
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        batch_id = register(ledger, [row("slow-1", 2), row("slow-2", 3)])
        try:
            run_flow(
                pay_batch,
                parameters={
                    "batch_id": batch_id,
                    "api_url": slow.url,
                    "sandbox": True,
                    "ledger_url": ledger.url,
                    "out_dir": str(tmp_path / "reports"),
                    "poll_interval": 0.3,
                    "track_deadline": 2.0,
                },
                error_logger=logging.getLogger("prefect.flow_runs"),
            )
            raised = None
        except Exception as exc:
            raised = exc

    assert isinstance(raised, NotAllPaid), raised
    waiting = [line for line in run_lines.lines if "waiting for 2 payouts" in line]
    assert waiting, run_lines.lines
    assert "slow-1 PROCESSING for" in waiting[0] or "slow-1 CREATED for" in waiting[0]
    assert "tracking stops at" in waiting[0] and "UTC (in " in waiting[0]
    assert any(
        "tracking deadline passed with 2 payouts not final" in line
        and "reconcile-pending and the watchdog keep following them" in line
        for line in run_lines.lines
    ), run_lines.lines
    [told] = wait_until(lambda: hook.bodies, what="the maker's notification")
    assert told["title"] == f"payflow: finished with unpaid rows: batch {batch_id}"
    assert told["message"].splitlines()[0] == (
        f"Batch {batch_id} finished: 2 of 2 rows not paid (PROCESSING 2)."
    )
    assert f"payflow status {batch_id}" in told["message"]
