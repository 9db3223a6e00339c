"""Serve an ASGI app with uvicorn in a daemon thread with its own event loop.

The embedded sandbox and the webhook receiver both run this way in a `payflow run` and in tests.
"""

from __future__ import annotations

import threading
import time

import uvicorn

STARTUP_TIMEOUT = 10.0
SHUTDOWN_TIMEOUT = 10.0


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
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                where = f"{self._config.host}:{self._config.port}"
                raise RuntimeError(f"{self._name} did not start on {where}")
            time.sleep(0.01)
        sockets = [s for srv in server.servers for s in srv.sockets]
        return int(sockets[0].getsockname()[1])

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for the thread; safe to call twice."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=SHUTDOWN_TIMEOUT)
            self._thread = None
        self._server = None
