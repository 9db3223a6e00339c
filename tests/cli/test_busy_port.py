"""A server command whose port is taken says so in one line, exit 2, before it starts anything
(the console's own test: tests/console/test_console_cli.py)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow


@pytest.mark.parametrize("command", [["webhooks"], ["links", "serve"]], ids=" ".join)
def test_a_taken_port_is_one_line_and_exit_2(command: list[str], tmp_path: Path) -> None:
    # `payflow webhooks` printed "listening on" the taken port, then uvicorn's own ERROR line,
    # then ours; `payflow links serve` first started the embedded sandbox and a receiver.
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = payflow_env(tmp_path / "home", tmp_path / "prefect")
        done = run_payflow([*command, "--port", str(port)], env, tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"payflow: cannot listen on 127.0.0.1:{port}: address already in use"
    ]
