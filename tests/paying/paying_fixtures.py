"""Fixtures of the paying and webhook tests: real sandbox over HTTP, real ledger file, client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from paying_support import fresh_postgres_database, make_client

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.sandbox import SandboxConfig, SandboxServer

# Sub-second sandbox delays keep the suite fast while payouts still pass through PROCESSING.
FAST = {"processing_delay": 0.05, "final_delay": 0.1, "correction_delay": 0.5}


@pytest.fixture
def start_sandbox() -> Iterator[Callable[..., SandboxServer]]:
    """Start a sandbox with the given config fields; stopped at the end of the test."""
    with ExitStack() as stack:

        def start(**config: Any) -> SandboxServer:
            server = SandboxServer(SandboxConfig().with_overrides(**{**FAST, **config}))
            return stack.enter_context(server)

        yield start


@pytest.fixture
def sandbox(start_sandbox: Callable[..., SandboxServer]) -> SandboxServer:
    return start_sandbox()


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
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture
async def client(sandbox: SandboxServer) -> AsyncIterator[AsyncPayoutsClient]:
    async with make_client(sandbox) as opened:
        yield opened
