"""Progress of a running batch, drawn from the ledger so it needs no hook into the flow.

In a terminal: two live bars on stderr. Elsewhere (cron, `--json`, a log file): one line on
stderr every ten seconds, so a long run never looks stuck.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from functools import partial
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from payflow.ledger import SENT_STATES, Ledger
from payflow.progress_line import (
    PROGRESS_EVERY_SECONDS,
    REFUSED,
    SENT_AND_FINAL,
    Throttled,
    progress_text,
    rows_in,
)

REFRESH_SECONDS = 0.5


class LedgerProgress:
    """Shows, on stderr, how many rows of the batch were sent and how many are final."""

    def __init__(
        self,
        ledger_url: str,
        batch_id: str,
        rows: int,
        *,
        live: bool,
        every: float = PROGRESS_EVERY_SECONDS,
        emit: Callable[[str], None] | None = None,
    ) -> None:
        self._ledger_url = ledger_url
        self._batch_id = batch_id
        self._rows = rows
        self._live = live
        self._every = every
        self._emit = emit or (lambda line: print(line, file=sys.stderr, flush=True))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LedgerProgress:
        run = self._run_bars if self._live else self._run_lines
        self._thread = threading.Thread(target=run, name="progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _watch(self, show: Callable[[Callable[[], Mapping[str, int]]], None], pause: float) -> None:
        """Call `show` every `pause` seconds until stopped, with a function that reads the
        batch's rows per state: a `show` with nothing to show reads nothing."""
        ledger: Ledger | None = None
        stopping = False
        while not stopping:
            try:
                ledger = ledger or Ledger.open(self._ledger_url)
                if ledger.batch_exists(self._batch_id):
                    show(partial(ledger.batch_summary, self._batch_id))
            except Exception:  # noqa: S110 - progress must never break a payment run
                pass
            stopping = self._stop.wait(pause)
        if ledger is not None:
            ledger.close()

    def _run_lines(self) -> None:
        line = Throttled(self._emit, every=self._every)
        # The rows are counted only when a line is due (every 10 s), not at every look: the
        # count, once a second through a 5,000-row run, was a few percent of the run's CPU.
        self._watch(lambda counts: line(lambda: progress_text(self._batch_id, counts())), 1.0)

    def _run_bars(self) -> None:
        columns = (
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
            sent = bar.add_task("sent", total=self._rows)
            final = bar.add_task("final", total=self._rows)

            def show(read: Callable[[], Mapping[str, int]]) -> None:
                counts = read()
                # Of the rows a run may send: those refused in the file never fill a bar.
                total = sum(counts.values()) - rows_in(counts, REFUSED)
                bar.update(sent, completed=rows_in(counts, SENT_STATES), total=total)
                bar.update(final, completed=rows_in(counts, SENT_AND_FINAL), total=total)

            self._watch(show, REFRESH_SECONDS)
