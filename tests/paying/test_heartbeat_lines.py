"""A pay run whose ledger cannot take its heartbeat goes on, and says so in one line per beat:
a ledger down for a minute wrote six tracebacks per run into the worker's log."""

from __future__ import annotations

import logging
import time

from sqlalchemy import text

from payflow.ledger import Ledger
from payflow.paying.heartbeat import beating


def test_a_heartbeat_not_written_is_one_line_without_a_traceback(tmp_path, caplog):
    with (
        Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger,
        caplog.at_level(logging.WARNING, logger="payflow.paying.heartbeat"),
        beating(ledger, "b-1", "flow run calm-owl", every=0.05),
    ):
        with ledger.engine.begin() as conn:
            conn.execute(text("DROP TABLE pay_run_beats"))
        time.sleep(0.3)
    lines = [r for r in caplog.records if r.name == "payflow.paying.heartbeat"]
    assert lines and all(r.exc_info is None for r in lines)
    assert (
        lines[0]
        .getMessage()
        .startswith("pay run heartbeat of batch b-1 not written: OperationalError: ")
    )
    assert lines[-1].getMessage().startswith("pay run end of batch b-1 not written: ")
