"""Prefect's temporary server, started when a command begins instead of at its first flow.

With no PREFECT_API_URL, Prefect starts a temporary server at the first flow call and waits for
it. Measured with bench/bench_run.py, that start was most of a small run's cost: this process
imported Prefect's whole server package only to launch it, and the launch came after every
other import and after the sandbox. Launched here first (the same uvicorn command and settings
Prefect uses), the server boots on the other core while the command imports Prefect, opens the
ledger and starts the sandbox; `ready()` waits only for what is left. An operator's
PREFECT_API_URL (a warm server) is used as it is, and nothing is started.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx

from payflow.file_access import ensure_file, make_folder

if TYPE_CHECKING:
    from prefect.settings.legacy import Setting

    from payflow.settings import Settings

DEFAULT_TIMEOUT_SECONDS = 90.0

T = TypeVar("T")


# Runs `python -m uvicorn ARGS` as a child that ends with this process, even a SIGKILLed one:
# Linux's PR_SET_PDEATHSIG sends it SIGTERM (uvicorn's clean stop) when its parent dies, and a
# parent already gone before that was set is caught by the getppid check. Set in the child, not
# in a preexec_fn, which is unsafe in a process with threads. Elsewhere prctl is missing and the
# server is stopped at exit only, as before.
#
# Prefect's server package is imported first with the cyclic collector off, then what is alive
# is frozen (as payflow.collecting does; this child loads no payflow module): the collections
# its imports set off found little garbage, and the passes at exit skip it. Building the app
# under the pause too was measured slower: uvicorn builds it.
_LAUNCHER = """\
import gc, os, runpy, signal, sys
gc.disable()
parent = int(sys.argv.pop(1))
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
except (AttributeError, OSError):
    pass
if os.getppid() != parent:
    sys.exit(0)
import prefect.server.api.server
gc.collect()
gc.freeze()
gc.enable()
sys.argv[0] = "uvicorn"
runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)
"""


# What Prefect's own temporary server (a command that started none here) raises when it is slow.
PREFECT_TIMED_OUT = "Timed out while attempting to connect to ephemeral Prefect API server"
TIMEOUT_SETTING = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"


class PrefectServerNotStarted(Exception):
    """Prefect's server (the temporary one, or PREFECT_API_URL's) does not answer; nothing was
    sent."""


def _check_answers(api_url: str) -> None:
    """Raise PrefectServerNotStarted when nothing answers at `api_url`. Any HTTP answer counts:
    a server that answers otherwise is Prefect's to report. Without this an operator whose
    server was down read "unexpected error (RuntimeError)"."""
    try:
        with httpx.Client(timeout=10) as client:
            client.get(f"{api_url.rstrip('/')}/health")
    except httpx.TransportError as exc:
        raise PrefectServerNotStarted(
            f"Prefect's API at {_shown(api_url)} (PREFECT_API_URL) does not answer "
            f"({type(exc).__name__}); nothing was sent: start that server, or unset "
            "PREFECT_API_URL for a temporary one"
        ) from None


def _shown(url: str) -> str:
    """`url` without a user name or password it may carry (the line reaches a terminal)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def startup_timeout() -> float:
    """How long a temporary Prefect server may take to start: TIMEOUT_SETTING, else 90 s."""
    return float(os.environ.get(TIMEOUT_SETTING) or DEFAULT_TIMEOUT_SECONDS)


def not_started(where: str, then: str) -> str:
    """The one line of a temporary Prefect server that did not start in time (`where`: its log
    or ""; `then`: what the command did)."""
    return (
        f"Prefect's temporary server did not start within {startup_timeout():.0f} s{where}; "
        f"{then}. A busy machine may need a higher {TIMEOUT_SETTING}, or set PREFECT_API_URL to "
        "a running server"
    )


def slow_start_line(exc: BaseException) -> str | None:
    """The one line for Prefect's own "Timed out ... ephemeral Prefect API server" RuntimeError
    (ended "unexpected error (RuntimeError)"); None for any other exception."""
    if isinstance(exc, RuntimeError) and PREFECT_TIMED_OUT in str(exc):
        return not_started("", "the command stopped there (`payflow status` shows the ledger)")
    return None


def no_heartbeats() -> dict[Setting, Any]:
    """Prefect's settings for flows that send no flow-run heartbeats: the flows called on a
    Prefect server the command or console started (`TemporaryPrefect.flow_settings`)."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY

    return {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}


class TemporaryPrefect:
    """A temporary Prefect server for this command (or none, when PREFECT_API_URL is set)."""

    def __init__(self, home: Path, *, heartbeats: bool = True) -> None:
        self._log_path = home / "logs" / "prefect-server.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._port = 0
        self._given = os.environ.get("PREFECT_API_URL")  # an operator's server, asked once
        self._ready = self._given is not None
        self._own = not self._ready
        self._heartbeats = heartbeats and not self._own
        if self._own:
            self._launch()
            # Prefect reads its settings from the environment when first imported: after this.
            os.environ["PREFECT_API_URL"] = self.api_url
            atexit.register(self.stop)

    @classmethod
    def for_settings(cls, settings: Settings) -> TemporaryPrefect:
        """The server of a command with these settings: its home, its heartbeats setting."""
        return cls(settings.home, heartbeats=settings.prefect_heartbeats)

    @property
    def api_url(self) -> str:
        """The API URL of the server started here."""
        return f"http://127.0.0.1:{self._port}/api"

    def ready(self) -> None:
        """Wait until the server answers its health check; at once when it already has. A
        server of PREFECT_API_URL that does not answer at all ends the command in one line."""
        if self._given is not None:
            given, self._given = self._given, None
            _check_answers(given)
        if self._ready:
            return
        deadline = time.monotonic() + startup_timeout()
        with httpx.Client(timeout=5) as client:
            while time.monotonic() < deadline:
                if self._process is None or self._process.poll() is not None:
                    break  # it exited: its log says why
                try:
                    if client.get(f"{self.api_url}/health").status_code == 200:
                        self._ready = True
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
        raise PrefectServerNotStarted(not_started(f" (see {self._log_path})", "nothing was sent"))

    @contextmanager
    def flow_settings(self) -> Iterator[None]:
        """Prefect's settings for the flows called in this block, in this thread: on a server
        started here, no flow-run heartbeats. Each flow call's end waited up to a second for
        the heartbeat thread's sleep, and nothing could read a missing heartbeat of a crashed
        run from a server that ends with it (payflow's watchdog reads the ledger's heartbeats).
        On an operator's server (PREFECT_API_URL), Prefect's settings as they are, unless
        `heartbeats` was False (PAYFLOW_PREFECT_HEARTBEATS)."""
        if self._heartbeats:
            yield
            return
        from prefect.settings import temporary_settings

        with temporary_settings(updates=no_heartbeats()):
            yield

    def calling(self, work: Callable[[], T]) -> Callable[[], T]:
        """`work`, which calls flows, run within `flow_settings()` in whichever thread runs it
        (`run_until_done`'s)."""

        def called() -> T:
            with self.flow_settings():
                return work()

        return called

    def stop(self) -> None:
        """Stop the server started here (called at exit too)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def _launch(self) -> None:
        ensure_file(make_folder(self._log_path.parent) / self._log_path.name)
        self._log = self._log_path.open("ab")
        # The socket is bound here and handed over, so no other process can take the port
        # between choosing it and the server's start; early health checks wait in its backlog.
        listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listening.bind(("127.0.0.1", 0))
        listening.listen(128)
        self._port = listening.getsockname()[1]
        with listening:
            self._process = subprocess.Popen(  # noqa: S603 - fixed arguments, no input
                [
                    sys.executable,
                    "-c",
                    _LAUNCHER,
                    str(os.getpid()),
                    "--factory",
                    "prefect.server.api.server:create_app",
                    "--fd",
                    str(listening.fileno()),
                    "--log-level",
                    "error",
                    "--lifespan",
                    "on",
                ],
                # The variables Prefect's own temporary server runs with (SubprocessASGIServer).
                env={
                    **os.environ,
                    "PREFECT_UI_ENABLED": "0",
                    "PREFECT__SERVER_EPHEMERAL": "1",
                    "PREFECT__SERVER_FINAL": "1",
                },
                pass_fds=(listening.fileno(),),
                # Its own session: a terminal's Ctrl-C (SIGINT to the whole foreground process
                # group) reached the server too, so the run it should let settle lost its
                # Prefect API, hung for minutes and ended "unexpected error" with no resume line.
                # It still ends with this process: at exit, or by the death signal above.
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
            )
