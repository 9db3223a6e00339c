"""The temporary Prefect server a flow command starts as it begins (payflow.prefect_server)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest

from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.quiet import prefect_environment


@pytest.fixture
def no_prefect_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No PREFECT_API_URL, payflow's Prefect defaults for a fresh home; all restored after."""
    monkeypatch.setenv("PREFECT_API_URL", "set, so that teardown restores the original")
    monkeypatch.delenv("PREFECT_API_URL")
    for key, value in prefect_environment(tmp_path).items():
        monkeypatch.setenv(key, value)
    return tmp_path


def test_an_operators_server_is_used_and_nothing_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    prefect = TemporaryPrefect(tmp_path)
    prefect.ready()  # returns at once: nothing to wait for
    assert os.environ["PREFECT_API_URL"] == "http://127.0.0.1:9/api"
    assert not (tmp_path / "logs" / "prefect-server.log").exists()


@pytest.mark.timeout(150)
def test_the_server_starts_answers_and_stops(no_prefect_url: Path) -> None:
    prefect = TemporaryPrefect(no_prefect_url)
    try:
        # Set before Prefect reads its settings, so every flow of the command uses this server.
        assert os.environ["PREFECT_API_URL"] == prefect.api_url
        prefect.ready()
        assert httpx.get(f"{prefect.api_url}/health", timeout=10).json() is True
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
