"""The temporary Prefect server a flow command starts as it begins (payflow.prefect_server)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from support.servers import free_port
from support.waiting import wait_until

from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.quiet import prefect_environment
from payflow.stopping import run_until_done


@pytest.fixture
def no_prefect_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No PREFECT_API_URL, payflow's Prefect defaults for a fresh home; all restored after."""
    monkeypatch.setenv("PREFECT_API_URL", "set, so that teardown restores the original")
    monkeypatch.delenv("PREFECT_API_URL")
    for key, value in prefect_environment(tmp_path).items():
        monkeypatch.setenv(key, value)
    return tmp_path


def test_an_operators_server_is_used_and_nothing_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared_prefect_server: str
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", shared_prefect_server)
    prefect = TemporaryPrefect(tmp_path)
    prefect.ready()  # one health check: nothing to wait for
    assert os.environ["PREFECT_API_URL"] == shared_prefect_server
    assert not (tmp_path / "logs" / "prefect-server.log").exists()
    # Flows on an operator's server keep Prefect's heartbeats, which may watch for crashed runs,
    # unless its settings say none (PAYFLOW_PREFECT_HEARTBEATS=false).
    assert run_until_done(prefect.calling(heartbeat_frequency)) == heartbeat_frequency()
    assert heartbeat_frequency() is not None
    quiet = TemporaryPrefect(tmp_path, heartbeats=False)
    assert run_until_done(quiet.calling(heartbeat_frequency)) is None


def heartbeat_frequency() -> int | None:
    """The flow-run heartbeat interval a flow called here would use."""
    from prefect.settings import get_current_settings

    return get_current_settings().flows.heartbeat_frequency


def test_an_operators_server_that_does_not_answer_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    down = f"http://127.0.0.1:{free_port()}/api"
    monkeypatch.setenv("PREFECT_API_URL", down)
    prefect = TemporaryPrefect(tmp_path)
    with pytest.raises(PrefectServerNotStarted) as refused:
        prefect.ready()
    assert str(refused.value) == (
        f"Prefect's API at {down} (PREFECT_API_URL) does not answer (ConnectError); nothing was "
        "sent: start that server, or unset PREFECT_API_URL for a temporary one"
    )
    assert not (tmp_path / "logs" / "prefect-server.log").exists()


@pytest.mark.timeout(150)
def test_the_server_starts_answers_and_stops(no_prefect_url: Path) -> None:
    prefect = TemporaryPrefect(no_prefect_url)
    try:
        # Set before Prefect reads its settings, so every flow of the command uses this server.
        assert os.environ["PREFECT_API_URL"] == prefect.api_url
        prefect.ready()
        assert httpx.get(f"{prefect.api_url}/health", timeout=10).json() is True
        # Flows called on it, in the thread that runs them, send no heartbeats: the server ends
        # with the command, and each flow's end waited up to a second for the heartbeat thread.
        assert run_until_done(prefect.calling(heartbeat_frequency)) is None
        with prefect.flow_settings():
            assert heartbeat_frequency() is None
        assert heartbeat_frequency() is not None
    finally:
        prefect.stop()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{prefect.api_url}/health", timeout=2)


def test_a_server_that_exits_is_one_clear_error(
    no_prefect_url: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", "/bin/false")
    prefect = TemporaryPrefect(no_prefect_url)
    with pytest.raises(PrefectServerNotStarted, match=r"did not start.*prefect-server\.log"):
        prefect.ready()
    prefect.stop()


OWNER = """\
import sys, time
from pathlib import Path
from payflow.prefect_server import TemporaryPrefect
prefect = TemporaryPrefect(Path(sys.argv[1]))
prefect.ready()
print(prefect.api_url, prefect._process.pid, flush=True)
time.sleep(600)
"""


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.timeout(150)
def test_a_sigkilled_command_takes_its_server_with_it(no_prefect_url: Path) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(no_prefect_url)], stdout=subprocess.PIPE, text=True
    )
    server_pid = 0
    try:
        assert owner.stdout is not None
        url, pid = owner.stdout.readline().split()
        server_pid = int(pid)
        assert _answers(url)
        owner.kill()  # SIGKILL: no atexit, no finally in the owner
        owner.wait(timeout=10)
        wait_until(lambda: not _answers(url), what="the orphaned server to stop", timeout=30)
        wait_until(lambda: not _alive(server_pid), what="the server process to end", timeout=30)
    finally:
        if owner.poll() is None:
            owner.kill()
        if server_pid and _alive(server_pid):
            os.kill(server_pid, signal.SIGKILL)  # only when the test already failed


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_password_in_the_operators_prefect_url_is_not_shown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    port = free_port()
    monkeypatch.setenv("PREFECT_API_URL", f"http://ops:s3cret-word@127.0.0.1:{port}/api")
    with pytest.raises(PrefectServerNotStarted) as refused:
        TemporaryPrefect(tmp_path).ready()
    assert "s3cret-word" not in str(refused.value) and "ops" not in str(refused.value)
    assert f"Prefect's API at http://127.0.0.1:{port}/api (PREFECT_API_URL)" in str(refused.value)
