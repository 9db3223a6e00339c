"""A pay run's heartbeat in the ledger, written from a thread while the run lives.

The beat is what tells a console that a run (in a Prefect worker, another console, the command
line) is alive; a run whose process died stops beating, so it reads interrupted, not "paying"
forever, and the daily run replaces it (`left_behind`). The run id is a worker id
(host:pid:nonce): on its own host a dead run is known at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from payflow.ledger import Ledger
from payflow.ledger.run_beats import batch_beats, beat, end_beats
from payflow.paying.workers import new_worker_id, worker_is_dead
from payflow.settings import BEATS_PER_WINDOW

logger = logging.getLogger(__name__)


@contextmanager
def beating(ledger: Ledger, batch_id: str, label: str, every: float) -> Iterator[str]:
    """Beat every `every` seconds (the settings' `run_beat_seconds`) for the batch's run until
    the block ends; the run id. The first beat is written before the block starts, so the run is
    seen alive from its first step; it records the window those beats keep."""
    run_id = new_worker_id()
    window = timedelta(seconds=every * BEATS_PER_WINDOW)
    beat(ledger, run_id, batch_id, label, window)
    stop = threading.Event()

    def keep_beating() -> None:
        while not stop.wait(every):
            try:
                beat(ledger, run_id, batch_id, label, window)
            except Exception as exc:  # a database blip must not end the run; the next may pass
                # One line each: a ledger down for a minute wrote six tracebacks per run.
                logger.warning("pay run heartbeat of batch %s not written: %s", batch_id, _why(exc))

    thread = threading.Thread(target=keep_beating, daemon=True, name="pay-run-heartbeat")
    thread.start()
    try:
        yield run_id
    finally:
        stop.set()
        thread.join(timeout=every)
        try:
            end_beats(ledger, run_id)
        except Exception as exc:  # not recorded: the beat goes stale instead, a window later
            logger.warning("pay run end of batch %s not written: %s", batch_id, _why(exc))


def _why(exc: BaseException) -> str:
    """The exception's kind and first line (a driver's message may span many)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__


def left_behind(
    ledger: Ledger,
    batch_id: str,
    started_at: datetime | None,
    stale_after: timedelta,
) -> bool:
    """True when a pay run of the batch, started at `started_at` by Prefect's account, has no
    process behind it: it started over `stale_after` ago and no run of the batch was heard since.

    Any recent beat counts, another run's or an ended one (a run ends its beat a moment before
    Prefect reads it final): a run this cannot tell from a live one is never judged dead."""
    now = ledger.now()
    if started_at is None or now - started_at < stale_after:
        return False  # still starting: its first beat comes after Prefect shows it Running
    heard = (b for b in batch_beats(ledger, batch_id) if b.recent(now, stale_after))
    return all(worker_is_dead(b.run_id) for b in heard)


def died_here(ledger: Ledger, batch_id: str, started_at: datetime | None) -> bool:
    """True when every run of the batch heard since `started_at` ran on this host and its
    process is gone: known at once, where `left_behind` waits `stale_after` to judge."""
    if started_at is None:
        return False
    beats = [b for b in batch_beats(ledger, batch_id) if b.beat_at >= started_at]
    return bool(beats) and all(worker_is_dead(b.run_id) for b in beats)
