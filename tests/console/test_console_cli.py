"""`payflow console` as an operator starts it: no settings, its URL, the first-run message,
and an approved batch paid in the console's own process on the embedded sandbox."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import httpx
from cli.cli_support import PAYFLOW, payflow_env, run_payflow
from console_support import CLEAN_ROWS, PASSWORD, batch_csv, csrf_of, wait_for_line
from support.servers import free_port


def test_console_with_no_settings_guides_the_first_user_and_pays_in_its_own_process(
    tmp_path: Path,
) -> None:
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    env.pop("PREFECT_API_URL", None)  # no settings at all: a console of its own
    port = free_port()
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
        url_line = wait_for_line(out, "payflow console:", console)
        assert url_line == f"payflow console: http://127.0.0.1:{port}/"
        said = err.read_text(encoding="utf-8")
        assert "first run: no operators yet" in said
        assert "payflow console add-user ADMIN --role admin" in said
        assert "no real money" in said.lower()

        bad_role = run_payflow(["console", "add-user", "ann", "--role", "boss"], env, tmp_path)
        assert bad_role.returncode != 0 and "role must be one of" in bad_role.stderr
        assert "Traceback" not in bad_role.stderr

        # The first operator is an admin, who signs in and adds the others.
        first = _add_user(env, tmp_path, "ada", "admin")
        assert first.returncode == 0, first.stderr
        assert "ada is this ledger's first admin" in first.stderr
        login = subprocess.run(
            [*PAYFLOW, "login", "ada", "--password-stdin"],
            env=env,
            cwd=tmp_path,
            input=PASSWORD + "\n",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert login.returncode == 0, login.stderr
        for name, role in (("ann", "maker"), ("bob", "checker")):
            added = _add_user(env, tmp_path, name, role)
            assert added.returncode == 0, added.stderr
            assert added.stdout.strip() == f"operator {name} ({role}) created"

        base = f"http://127.0.0.1:{port}"
        maker, checker = _signed_in(base, "ann"), _signed_in(base, "bob")
        assert "No batches yet" in maker.get("/batches").text
        token = csrf_of(maker.get("/upload").text)
        uploaded = maker.post(
            "/upload",
            files={"file": ("cli.csv", batch_csv(CLEAN_ROWS))},
            data={"csrf": token},
            follow_redirects=True,
        )
        found = re.search(r'action="/batches/([0-9a-f]+)/submit"', uploaded.text)
        assert found, uploaded.text
        batch_id = found.group(1)
        maker.post(f"/batches/{batch_id}/submit", data={"csrf": token})
        form = checker.get(f"/batches/{batch_id}/approve").text
        approved = checker.post(
            f"/batches/{batch_id}/approve",
            data={"csrf": csrf_of(form), "decision": "approve"},
            follow_redirects=True,
        )
        assert "payout run started in the console process" in approved.text
        progress = _wait_until_over(checker, batch_id)
        maker.close()
        checker.close()
        assert progress["final"] == len(CLEAN_ROWS), progress
        assert progress["state"] == "finished with failures", progress
    finally:
        console.send_signal(signal.SIGTERM)
        code = console.wait(timeout=60)
    said = err.read_text(encoding="utf-8")
    assert code == 0, said
    assert "Traceback" not in said and PASSWORD not in said


def _add_user(env: dict[str, str], cwd: Path, name: str, role: str) -> CompletedProcess[str]:
    return subprocess.run(
        [*PAYFLOW, "console", "add-user", name, "--role", role, "--password-stdin"],
        env=env,
        cwd=cwd,
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _signed_in(base: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=60)
    assert client.get("/batches").status_code == 303  # to the sign-in page
    token = csrf_of(client.get("/login").text)
    signed = client.post("/login", data={"csrf": token, "name": name, "password": PASSWORD})
    assert signed.status_code == 303, signed.text
    return client


def _wait_until_over(client: httpx.Client, batch_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while True:
        progress: dict[str, Any] = client.get(f"/batches/{batch_id}/progress.json").json()
        if progress["state"] not in ("paying", "awaiting approval"):
            return progress
        assert time.monotonic() < deadline, progress
        time.sleep(0.5)


def test_a_busy_port_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_payflow(["console", "--port", str(port)], env, tmp_path, timeout=60)
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == f"payflow: cannot listen on 127.0.0.1:{port}: address already in use"
    )
    assert result.stdout == ""


def _prefect_server_of(parent: int) -> int | None:
    listing = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,ppid=,args="], capture_output=True, text=True, check=True
    ).stdout
    for line in listing.splitlines():
        pid, ppid, args = line.split(None, 2)
        if int(ppid) == parent and "prefect.server.api.server:create_app" in args:
            return int(pid)
    return None


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_stop_while_the_console_starts_leaves_no_prefect_server_behind(tmp_path: Path) -> None:
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    env.pop("PREFECT_API_URL", None)
    err = tmp_path / "console.err"
    with err.open("w") as stderr:
        console = subprocess.Popen(
            [*PAYFLOW, "console", "--port", str(free_port())],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        deadline = time.monotonic() + 60
        server = None
        while server is None and time.monotonic() < deadline:
            assert console.poll() is None, err.read_text(encoding="utf-8")
            server = _prefect_server_of(console.pid)
            time.sleep(0.05)
        assert server is not None, "the console never started Prefect's server"
        console.send_signal(signal.SIGTERM)  # the operator gives up while Prefect boots
        stdout, _ = console.communicate(timeout=60)
    finally:
        if console.poll() is None:
            console.kill()
    said = err.read_text(encoding="utf-8")
    assert console.returncode == 128 + signal.SIGTERM, said
    assert "stopped on SIGTERM while starting" in said
    assert "Traceback" not in said
    assert stdout == ""  # no URL: it never served
    deadline = time.monotonic() + 10
    while not _gone(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(server), "the console's Prefect server outlived it"
