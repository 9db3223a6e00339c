"""Stopping a run on SIGTERM or SIGINT without losing a row: stop sending, let requests in flight
settle in the ledger, then end with a line that says how to resume.

Signals are process-wide, so the flag is too: the submit loop and the tracker look at `STOP`.
The run itself goes on in a worker thread (`run_until_done`), because Prefect replaces SIGTERM
with an exception in whatever flow runs on the main thread, which would cut requests short.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

from payflow.expected import ExpectedFailure

T = TypeVar("T")
JOIN_STEP = 0.2  # seconds: how often the main thread wakes up to run signal handlers
HANDLED = (signal.SIGTERM, signal.SIGINT)


class RunInterrupted(ExpectedFailure):
    """The run stopped sending on a signal; every row is in the ledger."""

    def __init__(self, batch_id: str, signal_name: str) -> None:
        super().__init__(f"batch {batch_id}: stopped on {signal_name}")
        self.batch_id = batch_id
        self.signal_name = signal_name


class StoppedByOperator(ExpectedFailure):
    """`payflow stop` was recorded in the ledger while the run paid: it sent nothing more, and
    every row is in the ledger (the message says so, and who stopped it)."""


class StopFlag:
    """Set once a stop was asked for; read by the loops that send and wait."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signal_name = ""

    def request(self, signal_name: str) -> None:
        """Ask every loop to stop at its next safe point."""
        self.signal_name = self.signal_name or signal_name
        self._event.set()

    def requested(self) -> bool:
        """True once a stop was asked for."""
        return self._event.is_set()

    def clear(self) -> None:
        """Forget an earlier stop (a new run in the same process)."""
        self._event.clear()
        self.signal_name = ""


STOP = StopFlag()


@contextmanager
def stop_on_signals() -> Iterator[StopFlag]:
    """While the block runs, SIGTERM and SIGINT set `STOP` instead of killing the process.

    A second signal of the same kind kills as before, for an operator who will not wait."""
    STOP.clear()
    previous = {sig: signal.getsignal(sig) for sig in HANDLED}

    def handler(signum: int, frame: FrameType | None) -> None:
        STOP.request(signal.Signals(signum).name)
        signal.signal(signum, previous[signal.Signals(signum)] or signal.SIG_DFL)

    for sig in HANDLED:
        signal.signal(sig, handler)
    try:
        yield STOP
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old or signal.SIG_DFL)


@contextmanager
def signals_end_the_question() -> Iterator[None]:
    """Inside `stop_on_signals`, while the operator is asked a question: SIGTERM and SIGINT set
    `STOP` and also end the wait (a KeyboardInterrupt in the read), so the caller can stop.
    `STOP` alone left the question waiting: a Ctrl-C at "Pay 3 new rows?" did nothing."""
    previous = {sig: signal.getsignal(sig) for sig in HANDLED}

    def handler(signum: int, frame: FrameType | None) -> None:
        STOP.request(signal.Signals(signum).name)
        raise KeyboardInterrupt

    for sig in HANDLED:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old or signal.SIG_DFL)


def run_until_done(work: Callable[[], T]) -> T:
    """Run `work` in a thread and wait for it, leaving the main thread free for signals."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="payflow-run", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(JOIN_STEP)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


async def sleep_unless_stopped(seconds: float) -> None:
    """Sleep up to `seconds`, waking within `JOIN_STEP` once a stop was asked for."""
    until = time.monotonic() + seconds
    while not STOP.requested() and (left := until - time.monotonic()) > 0:
        await asyncio.sleep(min(JOIN_STEP, left))
