"""`payflow webhooks --port N` as an operator runs it: serves, records, stops cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def _start(tmp_path: Path, port: int) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYFLOW_")}
    env["PAYFLOW_HOME"] = str(tmp_path / "home")
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from payflow.cli import main; main()",
            "webhooks",
            "--port",
            str(port),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_healthy(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("receiver did not start")


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_webhooks_command_refuses_unsigned_and_stops_cleanly(tmp_path, stop_signal):
    port = free_port()
    process = _start(tmp_path, port)
    try:
        _wait_healthy(port, process)
        refused = httpx.post(f"http://127.0.0.1:{port}/webhooks", content=b"{}", timeout=5)
        assert refused.status_code == 401
        process.send_signal(stop_signal)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert (tmp_path / "home" / "ledger.sqlite3").exists()


def test_webhooks_command_port_in_use_is_one_line_exit_2(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        process = _start(tmp_path, port)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 2
    assert "Traceback" not in stderr
    assert f"cannot listen on 127.0.0.1:{port}" in stderr
