"""Fixtures of the paying and webhook tests: real sandbox over HTTP, real ledger file, client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from paying_support import make_client
from support.postgres import fresh_postgres_database
from support.sandbox import MakeSandbox

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.sandbox import SandboxServer


@pytest.fixture
def sandbox(make_sandbox: MakeSandbox) -> SandboxServer:
    return make_sandbox()


@pytest.fixture
def ledger_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ledger.sqlite3'}"


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Ledger]:
    with Ledger.open(ledger_url) as opened:
        yield opened


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway database on the PostgreSQL server CI runs (no skip when it is down)."""
    with fresh_postgres_database("payflow_paying") as url:
        yield url


@pytest.fixture
async def client(sandbox: SandboxServer) -> AsyncIterator[AsyncPayoutsClient]:
    async with make_client(sandbox) as opened:
        yield opened
