"""Fixtures of the sandbox tests: a started sandbox, a raw httpx client, a webhook receiver."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from sandbox_support import WebhookReceiver

from payflow.sandbox import SandboxServer


@pytest.fixture
def sandbox(sandbox_server: SandboxServer) -> SandboxServer:
    """The shared started sandbox (fast delays); see tests/conftest.py for overrides."""
    return sandbox_server


@pytest.fixture
def api(sandbox: SandboxServer) -> Iterator[httpx.Client]:
    """A raw httpx client bound to `sandbox` with its token."""
    with httpx.Client(
        base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}, timeout=5
    ) as client:
        yield client


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    """A started webhook receiver; `receiver.url` is the callbackUrl to give payouts."""
    state = WebhookReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status = state.record(dict(self.headers.items()), body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
