"""Fixtures of the reconciliation tests: a ledger file, a fast sandbox and a client on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.sandbox import SandboxServer


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as opened:
        yield opened


@pytest.fixture
async def client(sandbox_server: SandboxServer) -> AsyncIterator[AsyncPayoutsClient]:
    async with AsyncPayoutsClient(
        sandbox_server.token, base_url=sandbox_server.url, timeout=5.0, max_in_flight=8
    ) as opened:
        yield opened
