"""`payflow links serve` asks the merchantId before it answers a claim: a service whose
merchantId the widget refuses is said in one line at start, not as an error page later."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
from cli_support import killed_at_the_end, payflow_env, run_payflow, start_payflow
from support.servers import free_port


def test_links_serve_refuses_in_one_line_a_merchant_id_that_is_no_uuid(
    tmp_path: Path, make_sandbox
) -> None:
    sandbox = make_sandbox(merchant_id="m-1")
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_WIDGET_URL=sandbox.url,
    )
    done = run_payflow(["links", "serve", "--port", str(free_port())], env, tmp_path, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "payflow: cannot answer claims: the balance response gives merchantId 'm-1', not a UUID:"
        " the widget refuses links signed for it"
    ), done.stderr


def _first_lines_until_serving(env: dict[str, str], tmp_path: Path, port: int) -> list[str]:
    """What `payflow links serve --port PORT` says before it answers claims; then SIGTERM."""
    process = start_payflow(["links", "serve", "--port", str(port)], env, tmp_path)
    with killed_at_the_end(process):
        assert process.stderr is not None
        lines: list[str] = []
        for raw in iter(process.stderr.readline, b""):
            lines.append(raw.decode("utf-8").rstrip("\n"))
            if "answering claims on" in lines[-1]:
                break
        # Once it answers: a signal before uvicorn's handlers are in place is ignored.
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=30).status_code == 200
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=60) == 0, lines
    assert "answering claims on" in lines[-1], lines
    return lines


def test_links_serve_warns_when_claim_urls_name_another_port_of_this_machine(
    tmp_path: Path,
) -> None:
    # Claims issued with the default PAYFLOW_LINKS_URL (port 8090) led nowhere while the
    # server listened on the port given, and nothing said so.
    port = free_port()
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    warned = [line for line in _first_lines_until_serving(env, tmp_path, port) if "warning" in line]
    assert warned == [
        "payflow links: warning: claim URLs start with PAYFLOW_LINKS_URL http://127.0.0.1:8090, "
        f"which is not this server (port {port}): claims issued with it reach no server; serve "
        "on its port, or set PAYFLOW_LINKS_URL to this server's address before issuing claims"
    ]
    matching = {**env, "PAYFLOW_LINKS_URL": f"http://127.0.0.1:{port}"}
    port_again = _first_lines_until_serving(matching, tmp_path, port)
    assert not [line for line in port_again if "warning" in line]
