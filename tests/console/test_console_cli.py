"""`payflow console` as an operator starts it: no settings, its URL, the first-run message."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
from cli.cli_support import PAYFLOW, payflow_env, run_payflow
from console_support import csrf_of


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_line(path: Path, text: str, process: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 300  # the console starts Prefect's local server first
    while time.monotonic() < deadline:
        for line in path.read_text(encoding="utf-8").splitlines():
            if text in line:
                return line
        assert process.poll() is None, path.with_suffix(".err").read_text(encoding="utf-8")
        time.sleep(0.2)
    raise AssertionError(f"no {text!r} in {path}")


def test_console_with_no_settings_prints_its_url_and_how_to_add_the_first_user(
    tmp_path: Path,
) -> None:
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    env.pop("PREFECT_API_URL", None)  # no settings at all: a console of its own
    port = _free_port()
    out, err = tmp_path / "console.out", tmp_path / "console.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        console = subprocess.Popen(
            [*PAYFLOW, "console", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        url_line = _wait_for_line(out, "payflow console:", console)
        assert url_line == f"payflow console: http://127.0.0.1:{port}/"
        said = err.read_text(encoding="utf-8")
        assert "first run: no operators yet" in said
        assert "payflow console add-user NAME --role maker" in said
        assert "no real money" in said.lower()

        bad_role = run_payflow(["console", "add-user", "ann", "--role", "boss"], env, tmp_path)
        assert bad_role.returncode != 0 and "role must be one of" in bad_role.stderr
        assert "Traceback" not in bad_role.stderr

        added = subprocess.run(
            [*PAYFLOW, "console", "add-user", "ann", "--role", "maker", "--password-stdin"],
            env=env,
            cwd=tmp_path,
            input="a long enough password\n",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert added.returncode == 0, added.stderr
        assert added.stdout.strip() == "operator ann (maker) created"

        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            assert client.get("/batches").status_code == 303  # to the sign-in page
            signed = client.post(
                "/login",
                data={
                    "csrf": csrf_of(client.get("/login").text),
                    "name": "ann",
                    "password": "a long enough password",
                },
            )
            assert signed.status_code == 303
            assert "No batches yet" in client.get("/batches").text
    finally:
        console.send_signal(signal.SIGTERM)
        code = console.wait(timeout=60)
    said = err.read_text(encoding="utf-8")
    assert code == 0, said
    assert "Traceback" not in said and "a long enough password" not in said
