"""The console fixture: environment pointed at a fresh ledger, console served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from console_support import Console, start_console

from payflow.console.paying import start_local_prefect


@pytest.fixture(scope="session", autouse=True)
def _stop_prefect_at_the_end() -> Iterator[None]:
    """Stop the console tests' Prefect server while pytest still holds the output streams: left
    to atexit, its "Stopping temporary server" line hits a closed stream as a logging error."""
    yield
    from prefect.logging.handlers import APILogWorker
    from prefect.server.api.server import SubprocessASGIServer

    # A pay run that ended just before may still have logs queued for the server: sent first,
    # or their worker prints "Error logging to API" once the server is gone.
    APILogWorker.drain_all(timeout=5)
    SubprocessASGIServer().stop()  # the process's one server on a free port, if it started


@pytest.fixture
def console(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sandbox_server: object,
    request: pytest.FixtureRequest,
) -> Iterator[Console]:
    """A console over a new SQLite ledger and the test's sandbox (flows read the same env)."""
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", f"sqlite:///{tmp_path / 'ledger.db'}")
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    # As `payflow console` does: one Prefect server for the console's pay runs, started first.
    pays = request.node.get_closest_marker("pays")
    # A fresh Prefect home on a loaded 2-core machine can take minutes to start.
    prefect_api_url = start_local_prefect(timeout_seconds=300) if pays else None
    started = start_console(
        tmp_path,
        sandbox_server.url,  # type: ignore[attr-defined]
        max_upload_bytes=64 * 1024,
        prefect_api_url=prefect_api_url,
    )
    yield started
    started.server.stop()
    started.ctx.ledger.close()
