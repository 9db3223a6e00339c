"""Serve an ASGI app with uvicorn in a daemon thread with its own event loop.

The embedded sandbox, the webhook receiver and the claims server run this way (`BackgroundServer`)
in a `payflow run` and in tests.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Self

import uvicorn
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.types import Message

STARTUP_TIMEOUT = 10.0
SHUTDOWN_TIMEOUT = 10.0


class BodyTooLarge(Exception):
    """A request body over the limit of the route reading it."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (BodyTooLarge) once past `limit` bytes.

    Starlette's `request.body()` and `request.form()` hold whatever a client sends: one unsigned
    400 MB POST to the webhook receiver took 900 MB of memory before its signature was even
    checked. A declared Content-Length over the limit is refused before a byte is read, and a
    chunked body is counted as it arrives."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)


async def read_form(request: Request, limit: int, **parser_limits: int) -> FormData:
    """The request's form, parsed from a body read by `read_body` (BodyTooLarge past `limit`).

    The parser reads a request of its own whose stream replays the body already received, so
    nothing depends on how Starlette caches a body it read itself."""
    body = await read_body(request, limit)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return await Request(request.scope, replay).form(**parser_limits)


class ThreadedServer:
    """One uvicorn server in a background thread: `start()` returns the bound port."""

    def __init__(self, config: uvicorn.Config, *, name: str) -> None:
        self._config = config
        self._name = name
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        """Serve; returns the bound port once the socket accepts connections."""
        server = self._server = uvicorn.Server(self._config)
        self._thread = threading.Thread(target=server.run, name=self._name, daemon=True)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        try:
            self._thread.start()
            while not server.started:
                if not self._thread.is_alive() or time.monotonic() > deadline:
                    where = f"{self._config.host}:{self._config.port}"
                    raise RuntimeError(f"{self._name} did not start on {where}")
                time.sleep(0.01)
        except BaseException:
            # A stop signal's SystemExit or Ctrl-C lands here too: a server left starting in
            # its thread ran on into the interpreter's exit, which could end in a crash.
            self.stop()
            raise
        sockets = [s for srv in server.servers for s in srv.sockets]
        return int(sockets[0].getsockname()[1])

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for the thread; safe to call twice."""
        if self._server is not None:
            self._server.should_exit = True
        thread, self._thread = self._thread, None
        if thread is not None and thread.ident is not None:  # started
            thread.join(timeout=SHUTDOWN_TIMEOUT)
        self._server = None


class BackgroundServer:
    """A payflow server in a background thread: `with Server(...) as server:` serves until the
    block ends. Subclasses give the uvicorn config, and may open and close what it serves."""

    thread_name = "payflow-server"

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._port = port
        self._runner: ThreadedServer | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(host={self._host!r}, port={self._port})"

    @property
    def port(self) -> int:
        """The bound port (the real one once started, when 0 was asked for)."""
        return self._port

    def _uvicorn_config(self) -> uvicorn.Config:
        raise NotImplementedError

    def _opening(self) -> None:
        """Before serving: open what the app needs (nothing by default)."""

    def _closed(self) -> None:
        """After serving: close what `_opening` opened (nothing by default); also after a
        start cut short, so it closes only what is open."""

    def start(self) -> Self:
        """Serve; returns once the socket accepts connections."""
        try:
            self._opening()  # inside: a stop signal just after it closes what it opened
            self._runner = ThreadedServer(self._uvicorn_config(), name=self.thread_name)
            self._port = self._runner.start()
        except BaseException:  # a stop signal while starting, too: what was opened is closed
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop serving and close what was opened; safe to call twice."""
        if self._runner is not None:
            self._runner.stop()
            self._runner = None
        self._closed()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
