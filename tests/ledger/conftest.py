"""Fixtures of the ledger tests: a real SQLite file per test, one real PostgreSQL per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ledger_support import FakeClock
from support.postgres import fresh_postgres_database

from payflow.ledger import Ledger


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL database shared by the session (tests use unique ids)."""
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ledger.sqlite3'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each test that takes it runs on a SQLite file and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger(ledger_url: str, clock: FakeClock) -> Iterator[Ledger]:
    with Ledger.open(ledger_url, clock=clock) as opened:
        yield opened
