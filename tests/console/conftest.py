"""The console fixture: environment pointed at a fresh ledger, console served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from console_support import Console, start_console


@pytest.fixture
def console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox_server: object
) -> Iterator[Console]:
    """A console over a new SQLite ledger and the test's sandbox (flows read the same env)."""
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", f"sqlite:///{tmp_path / 'ledger.db'}")
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    # In-process pay runs start Prefect's temporary server: slow on a loaded machine.
    monkeypatch.setenv("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "300")
    started = start_console(tmp_path, sandbox_server.url, max_upload_bytes=64 * 1024)  # type: ignore[attr-defined]
    yield started
    started.server.stop()
    started.ctx.ledger.close()
