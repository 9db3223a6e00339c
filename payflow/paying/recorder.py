"""Ledger writes from async code: the ledger is synchronous, so its calls run off the event loop.

One worker thread keeps the writes of one chunk in order and leaves the loop free to keep
requests in flight while the database commits. Created payouts, the hot path, are buffered and
written many per transaction (`Ledger.mark_created_many`): a crash before a flush leaves those
rows SUBMITTING, and the next run resolves them by lookup, as after any crash mid-POST.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from types import TracebackType
from typing import Any

from payflow.api.models import Payout
from payflow.ledger import CreatedPayout, EventSource, Ledger

logger = logging.getLogger(__name__)

FLUSH_ROWS = 100  # one transaction per this many created payouts...
FLUSH_SECONDS = 0.25  # ...or sooner, so rows do not sit SUBMITTING while a chunk runs long


class LedgerWriter:
    """Async facade over the outcome-recording calls of `Ledger` used by the submit protocol."""

    def __init__(
        self,
        ledger: Ledger,
        worker_id: str | None,
        *,
        flush_rows: int = FLUSH_ROWS,
        flush_seconds: float = FLUSH_SECONDS,
    ) -> None:
        self._ledger = ledger
        self._worker_id = worker_id
        self._flush_rows = flush_rows
        self._flush_seconds = flush_seconds
        self._executor: ThreadPoolExecutor | None = None
        self._buffer: list[CreatedPayout] = []
        self._flushes: set[asyncio.Future[None]] = set()
        self._ticker: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None

    async def __aenter__(self) -> LedgerWriter:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="payflow-ledger")
        self._ticker = asyncio.create_task(self._flush_periodically())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            await asyncio.gather(self._ticker, return_exceptions=True)
            self._ticker = None
        try:
            await self.flush()
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None

    async def call(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Run one ledger call in the writer thread, after every write queued before it."""
        if self._executor is None:
            raise RuntimeError("LedgerWriter used outside `async with`")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, *args, **kwargs))

    async def mark_created(self, external_id: str, payout: Payout, *, adopted: bool) -> None:
        """Record the payout the service holds for this row (created now, or found by lookup)."""
        source = EventSource.RESOLVE if adopted else EventSource.SUBMIT
        self._buffer.append(
            CreatedPayout(external_id, payout.id, payout.status, payout.status_message, source)
        )
        if len(self._buffer) >= self._flush_rows:
            self._start_flush()

    async def flush(self) -> None:
        """Write every buffered payout and wait for writes already on their way."""
        self._start_flush()
        pending = list(self._flushes)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if self._failure is not None:
            # Those rows stay SUBMITTING: the next run resolves them by lookup.
            raise self._failure

    def _start_flush(self) -> None:
        if not self._buffer:
            return
        created, self._buffer = self._buffer, []
        future = asyncio.ensure_future(self.call(self._write_created, created))
        self._flushes.add(future)
        future.add_done_callback(self._flush_done)

    def _flush_done(self, future: asyncio.Future[None]) -> None:
        self._flushes.discard(future)
        if not future.cancelled() and future.exception() is not None and self._failure is None:
            self._failure = future.exception()

    async def _flush_periodically(self) -> None:
        while True:
            await asyncio.sleep(self._flush_seconds)
            self._start_flush()

    def _write_created(self, created: list[CreatedPayout]) -> None:
        outcome = self._ledger.mark_created_many(created)
        for external_id, error in outcome.errors.items():
            # The payout exists at the service either way; the ledger refused the row's move.
            logger.error("created payout of %s not recorded: %s", external_id, error)

    async def mark_submit_rejected(self, external_id: str, message: str) -> None:
        """Record a final 4xx answer with the service's message."""
        await self.call(
            self._ledger.mark_submit_rejected, external_id, message, worker_id=self._worker_id
        )

    async def mark_conflict(self, external_id: str, differences: list[str]) -> None:
        """Record that the externalId exists at the service with other content."""
        message = "a payout with this externalId exists with different " + ", ".join(differences)
        await self.call(self._ledger.mark_conflict, external_id, message, worker_id=self._worker_id)

    async def release_for_retry(self, external_id: str, reason: str | None = None) -> None:
        """Hand a row that provably has no payout back to the queue, saying why it was not
        sent when the service gave a reason."""
        await self.call(
            self._ledger.release_for_retry, external_id, worker_id=self._worker_id, reason=reason
        )
