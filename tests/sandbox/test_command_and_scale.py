"""`payflow sandbox` as a real process, and the scheduler under 10,000 payouts."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from decimal import Decimal

import httpx
import pytest

from payflow.sandbox import SandboxConfig
from payflow.sandbox.payouts import create_payout
from payflow.sandbox.state import SandboxState
from payflow.sandbox.validation import validate_payout_request

COMMAND = [sys.executable, "-c", "from payflow.cli import main; main()", "sandbox"]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_command_prints_url_and_token_serves_and_stops_cleanly(stop):
    env = {**os.environ, "PAYFLOW_SANDBOX_TOKEN": "cli-token-1"}
    process = subprocess.Popen(
        [*COMMAND, "--port", "0", "--error-rate", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        url_line = process.stdout.readline()
        token_line = process.stdout.readline()
        url = url_line.strip().rsplit(" ", 1)[-1]
        assert url.startswith("http://127.0.0.1:")
        assert token_line.strip().endswith("cli-token-1")
        services = httpx.get(f"{url}/v1/payouts/services", headers={"X-Api-Token": "cli-token-1"})
        assert services.status_code == 200
    finally:
        process.send_signal(stop)
        _, stderr = process.communicate(timeout=15)

    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "stopped" in stderr


def test_command_refuses_a_bad_setting_in_one_line():
    env = {**os.environ, "PAYFLOW_SANDBOX_FINAL_DELAY": "soon"}

    result = subprocess.run(COMMAND, capture_output=True, text=True, env=env, timeout=30)

    assert result.returncode == 2
    assert "final_delay" in result.stderr and "Traceback" not in result.stderr


async def test_ten_thousand_payouts_all_reach_their_final_status():
    config = SandboxConfig(processing_delay=0.05, final_delay=0.05, correction_delay=0.05)
    state = SandboxState(config)
    try:
        for n in range(10_000):
            request = {
                "amount": "5",
                "currency": "XOF",
                "paymentType": "SIM",
                "externalId": f"bulk-{n}",
                "account": {"name": "A", "requisites": f"2250{n:05d}{n % 5}111", "userId": "u"},
            }
            create_payout(state, validate_payout_request(request))
        for _ in range(200):
            if len(state.timers) == 0:
                break
            await asyncio.sleep(0.05)
    finally:
        await state.webhooks.close()

    statuses = [p["status"] for p in state.payouts.values()]
    assert len(statuses) == 10_000 and set(statuses) == {"COMPLETED", "FAILED"}
    assert state.balances.held("XOF") == 0
    # `n % 5 == 1` ends in 1111 (FAILED, released); the rest complete and are debited
    completed = statuses.count("COMPLETED")
    assert state.balances.available("XOF") == config.balances["XOF"] - Decimal(5 * completed)
