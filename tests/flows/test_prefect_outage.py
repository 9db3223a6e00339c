"""A Prefect server stopped and started again under a paying run (issue 38, item 5).

Reproduced by hand first (a process worker, a one-batch deployment, the server down for 60 s):
the run's progress artifact update waited out the Prefect client's retries, raised ConnectError
and failed the run with a full traceback, its rows left to the watchdog; the worker's
cancellation observer gave up ("Cancellation observer failed. Flow run cancellation disabled").
Now what the run shows in Prefect is best effort (`payflow.shown`): the outage costs one line,
the run pays every row once, and `payflow stop` reaches a run through the ledger
(tests/paying/test_stop_from_the_ledger.py). Here the run is in-process against a server of its
own (the shared ones cannot be stopped under other tests)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from paying_fixtures import ledger, ledger_url
from paying_support import pay_state, register, rows, states
from prefect.settings import PREFECT_CLIENT_MAX_RETRIES
from support.prefect import prefect_harness
from support.prefect_database import fresh_prefect_database
from support.servers import answers, free_port, start_group, stop_group
from support.stats import sandbox_stats, set_faults
from support.waiting import wait_until

from payflow.quiet import prefect_environment

__all__ = ["ledger", "ledger_url"]  # fixtures of the paying tests

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


class OwnServer:
    """`prefect server start` on a SQLite database of its own, stopped and started at will."""

    def __init__(self, home: Path) -> None:
        self.home, self.port = home, free_port()
        self.url = f"http://127.0.0.1:{self.port}/api"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
        self.env = {**env, **prefect_environment(home)}
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        prefect = str(Path(sys.executable).with_name("prefect"))
        command = [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(self.port)]
        self.starts += 1
        log = self.home / f"server-{self.starts}.log"
        self.process = start_group([*command, "--no-services"], self.env, log)
        wait_until(lambda: answers(f"{self.url}/health"), what="the Prefect server", timeout=240)

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process)
            self.process = None


@pytest.fixture
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnServer]:
    home = tmp_path_factory.mktemp("outage-prefect")
    fresh_prefect_database(home / "prefect.db", tmp_path_factory)
    server = OwnServer(home)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_prefect_outage_under_a_paying_run_costs_one_line_and_every_row_is_paid_once(
    own_server, sandbox, ledger, tmp_path, caplog
):
    batch_id = register(ledger, rows("outage", 30))
    set_faults(sandbox, latency=0.3)
    ended = {}

    def sent() -> int:
        return len(sandbox_stats(sandbox.url)["payoutsByExternalId"])

    # One retry: the client gives up in seconds, as it does after a minute with its defaults.
    with prefect_harness(own_server.url, {PREFECT_CLIENT_MAX_RETRIES: 1}):

        def pay() -> None:
            try:
                ended["state"] = pay_state(
                    sandbox, ledger, batch_id, tmp_path / "reports", chunk_size=1, max_in_flight=1
                )
            except BaseException as exc:  # the test reads it
                ended["error"] = exc

        run = threading.Thread(target=pay, daemon=True)
        run.start()
        wait_until(lambda: sent() >= 3 or not run.is_alive(), what="the first payouts", timeout=120)
        # Run alone, this test's flow run is the process's first: Prefect's logging set-up then
        # replaced the root logger's handlers, caplog's among them. Listen again (at most once).
        logging.getLogger().addHandler(caplog.handler)
        # Slow payouts while Prefect is down: the run must not end (and report its end to a
        # server that is not there) before the server is back, however long its start takes.
        set_faults(sandbox, latency=2.0)
        own_server.stop()
        sent_at_stop = sent()
        time.sleep(8)
        sent_while_down = sent() - sent_at_stop
        # Slower still while the server starts again: on a loaded machine its start took longer
        # than the batch's last payouts at 2 s each, and the run ended with Prefect still down.
        set_faults(sandbox, latency=20.0)
        own_server.start()
        set_faults(sandbox, latency=0.0)
        run.join(timeout=240)

    assert "error" not in ended, ended.get("error")
    state = ended["state"]
    if not state.is_completed():  # say where: a call to Prefect that failed the run
        failure = state.result(raise_on_failure=False)
        print("".join(traceback.format_exception(failure)))
    assert state.is_completed(), (state.name, state.message)
    assert states(ledger, batch_id) == {f"outage-{n}": "COMPLETED" for n in range(2, 32)}
    by_id = sandbox_stats(sandbox.url)["payoutsByExternalId"]
    assert sorted(by_id.values()) == [1] * 30
    assert sent_while_down >= 3  # the outage did not hold the payouts up
    # What the run logged (a worker's output): payflow's word on the outage, one line each.
    # Read as log records: Prefect's console handler may hold a stream bound before this test.
    records = [r for r in caplog.records if r.name.startswith(("prefect.flow_runs", "payflow"))]
    said = [r.getMessage() for r in records if "not shown in Prefect" in r.getMessage()]
    progress = [line for line in said if line.startswith("progress '")]
    assert progress and len(progress) <= 2, said  # once per progress bar, not once per chunk
    for line in said:
        assert line.endswith(
            "not shown in Prefect (ConnectError: [Errno 111] Connection refused); the run goes on"
        ), line
    assert all(r.exc_info is None for r in records), [r.getMessage() for r in records if r.exc_info]
