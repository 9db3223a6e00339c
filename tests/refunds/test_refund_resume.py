"""A refund run killed with SIGKILL mid-submit resumes without refunding any order twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from refunds_support import paid_orders, write_refunds
from support.stats import sandbox_stats

from payflow.ledger import Ledger

WORKER = Path(__file__).with_name("refund_worker.py")
ROOT = Path(__file__).resolve().parents[2]


def _worker(ledger_url: str, api_url: str, path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PAYFLOW_API_URL", None)
    return subprocess.Popen(
        [sys.executable, str(WORKER), ledger_url, api_url, str(path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_sigkilled_refund_run_resumes_without_a_second_refund(make_sandbox, ledger_url, tmp_path):
    sandbox = make_sandbox(latency=0.02)
    orders = paid_orders(sandbox, 200)
    path = write_refunds(
        tmp_path / "r.csv", [[o, f"kill-{n:04d}-0001", "", "", ""] for n, o in enumerate(orders)]
    )
    first = _worker(ledger_url, sandbox.url, path)
    deadline = time.monotonic() + 120
    while len(sandbox_stats(sandbox)["refunds"]) < 40:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first run never got going"
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    created_before = len(sandbox_stats(sandbox)["refunds"])
    assert created_before < 200  # killed mid-batch

    second = _worker(ledger_url, sandbox.url, path)
    out, err = second.communicate(timeout=180)
    assert second.returncode == 0, err[-2000:]

    seen = sandbox_stats(sandbox)
    assert len(seen["refunds"]) == 200
    assert set(seen["refundsByOrderId"].values()) == {1}
    batch_id = out.split()[0]
    with Ledger.open(ledger_url) as ledger:
        states = {v.state.value for v in ledger.refunds.rows(batch_id)}
        resolved = [
            v.external_id
            for v in ledger.refunds.rows(batch_id)
            if any(
                source == "resolve"
                for _, _, source, _ in ledger.refunds.events(v.external_id or "")
            )
        ]
    assert "SUBMITTING" not in states and "VALIDATED" not in states
    assert resolved  # the killed run's SUBMITTING rows were looked up before anything was sent
