"""Running one test body against both clients, and a tiny webhook receiver on 127.0.0.1."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from payflow.api import AsyncPayoutsClient, PayoutsClient


class EitherClient:
    """Awaitable view of a sync or async client: sync calls run in a worker thread."""

    def __init__(self, client: PayoutsClient | AsyncPayoutsClient) -> None:
        self.client = client
        self.kind = "async" if isinstance(client, AsyncPayoutsClient) else "sync"

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            if inspect.iscoroutinefunction(method):
                return await method(*args, **kwargs)
            return await asyncio.to_thread(method, *args, **kwargs)

        return call

    async def close(self) -> None:
        if isinstance(self.client, AsyncPayoutsClient):
            await self.client.aclose()
        else:
            self.client.close()


@dataclass
class Received:
    """Webhooks a receiver got: (headers, raw body) in arrival order."""

    items: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[tuple[dict[str, str], bytes]]:
        with self.lock:
            return list(self.items)


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, Received]]:
    """A real HTTP server collecting POSTed webhooks; yields (url, received)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with received.lock:
                received.items.append((dict(self.headers.items()), body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()
