"""A progress bar for a running batch, drawn from the ledger so it needs no hook into the flow."""

from __future__ import annotations

import threading
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from payflow.ledger import Ledger

SENT = ("CREATED", "PROCESSING", "COMPLETED", "FAILED", "CANCELED", "EXPIRED", "SUBMIT_REJECTED")
FINAL = ("COMPLETED", "FAILED", "CANCELED", "EXPIRED", "SUBMIT_REJECTED", "CONFLICT", "REJECTED")
REFRESH_SECONDS = 0.5


class LedgerProgress:
    """Shows, on stderr, how many rows of the batch were submitted and how many are final."""

    def __init__(self, ledger_url: str, batch_id: str, rows: int, *, enabled: bool) -> None:
        self._ledger_url = ledger_url
        self._batch_id = batch_id
        self._rows = rows
        self._enabled = enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LedgerProgress:
        if self._enabled:
            self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
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

    def _run(self) -> None:
        columns = (
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        ledger: Ledger | None = None
        with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
            submitted = bar.add_task("submitted", total=self._rows)
            final = bar.add_task("final", total=self._rows)
            while True:
                stopping = self._stop.wait(REFRESH_SECONDS)
                try:
                    ledger = ledger or Ledger.open(self._ledger_url)
                    if ledger.batch_exists(self._batch_id):
                        counts = ledger.batch_summary(self._batch_id)
                        bar.update(submitted, completed=sum(counts.get(s, 0) for s in SENT))
                        bar.update(final, completed=sum(counts.get(s, 0) for s in FINAL))
                except Exception:  # noqa: S110 - a progress bar must never break a payment run
                    pass
                if stopping:
                    break
        if ledger is not None:
            ledger.close()
