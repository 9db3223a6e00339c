"""Where a run a Prefect worker started pays: never the embedded sandbox by default."""

from __future__ import annotations

import httpx
import pytest

from payflow.connections import WORKER_RUN_VARIABLE, run_target
from payflow.runtime import ConfigurationError
from payflow.settings import Settings


def _settings(tmp_path) -> Settings:
    return Settings(api_url=None, ledger_url=f"sqlite:///{tmp_path / 'ledger.sqlite3'}")


def test_a_worker_run_without_an_api_url_is_refused_before_anything_is_sent(tmp_path, monkeypatch):
    # A worker started without PAYFLOW_API_URL paid the emulator and wrote COMPLETED into the
    # shared ledger: the real recipients were never paid, and a re-upload skipped them.
    monkeypatch.setenv(WORKER_RUN_VARIABLE, "0b6f2d1c-0000-4000-8000-000000000000")
    with (
        pytest.raises(ConfigurationError, match="PAYFLOW_API_URL is not set in this worker"),
        run_target(_settings(tmp_path)),
    ):
        pass


def test_a_worker_run_asking_for_the_sandbox_and_a_command_line_run_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv(WORKER_RUN_VARIABLE, "0b6f2d1c-0000-4000-8000-000000000000")
    with run_target(_settings(tmp_path), sandbox=True) as target:
        assert target.sandbox
        assert httpx.get(f"{target.api_url}/v1/payouts/services", timeout=10).status_code == 401
    monkeypatch.delenv(WORKER_RUN_VARIABLE)
    with run_target(_settings(tmp_path)) as target:
        assert target.sandbox
