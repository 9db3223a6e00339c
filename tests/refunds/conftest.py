"""Fixtures of the refund tests: a real sandbox over HTTP and a real ledger file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from payflow.ledger import Ledger
from payflow.sandbox import SandboxConfig, SandboxServer

FAST = {"processing_delay": 0.05, "final_delay": 0.1, "webhook_backoff": 0.05}


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
