"""A background server stopped while it starts leaves no thread serving and nothing open."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from types import FrameType

import pytest
import uvicorn
from starlette.applications import Starlette

from payflow.serving import BackgroundServer


@asynccontextmanager
async def _slow_start(app: Starlette) -> AsyncIterator[None]:
    await asyncio.sleep(1)  # the stop lands while uvicorn is still starting
    yield


class _SlowServer(BackgroundServer):
    thread_name = "payflow-test-slow-start"

    def __init__(self) -> None:
        super().__init__()
        self.opened = False

    def _uvicorn_config(self) -> uvicorn.Config:
        app = Starlette(lifespan=_slow_start)
        return uvicorn.Config(app, host=self._host, port=self._port, log_level="error")

    def _opening(self) -> None:
        self.opened = True

    def _closed(self) -> None:
        self.opened = False


def _stop_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # as `payflow console` does while it starts


@contextmanager
def _alarm_in(seconds: float) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _stop_signal)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _serving_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == _SlowServer.thread_name and t.is_alive()]


def test_a_stop_signal_while_a_server_starts_stops_its_thread_and_closes_what_it_opened() -> None:
    server = _SlowServer()
    with pytest.raises(SystemExit), _alarm_in(0.1), server:
        pytest.fail("the server cannot have started before the stop")
    # Left running, the thread went on into the interpreter's exit, where a thread still
    # serving can crash the process.
    assert _serving_threads() == []
    assert not server.opened
