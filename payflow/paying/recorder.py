"""Ledger writes from async code: the ledger is synchronous, so its calls run off the event loop.

One worker thread keeps the writes of one chunk in order and leaves the loop free to keep
requests in flight while the database commits.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from types import TracebackType
from typing import Any

from payflow.api.models import Payout
from payflow.ledger import EventSource, Ledger


class LedgerWriter:
    """Async facade over the outcome-recording calls of `Ledger` used by the submit protocol."""

    def __init__(self, ledger: Ledger, worker_id: str | None) -> None:
        self._ledger = ledger
        self._worker_id = worker_id
        self._executor: ThreadPoolExecutor | None = None

    async def __aenter__(self) -> LedgerWriter:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="payflow-ledger")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    async def call(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Run one ledger call in the writer thread."""
        if self._executor is None:
            raise RuntimeError("LedgerWriter used outside `async with`")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, *args, **kwargs))

    async def mark_created(self, external_id: str, payout: Payout, *, adopted: bool) -> None:
        """Record the payout the service holds for this row (created now, or found by lookup)."""
        source = EventSource.RESOLVE if adopted else EventSource.SUBMIT
        await self.call(
            self._ledger.mark_created,
            external_id,
            payout.id,
            payout.status,
            payout.status_message,
            source=source,
        )

    async def mark_submit_rejected(self, external_id: str, message: str) -> None:
        """Record a final 4xx answer with the service's message."""
        await self.call(
            self._ledger.mark_submit_rejected, external_id, message, worker_id=self._worker_id
        )

    async def mark_conflict(self, external_id: str, differences: list[str]) -> None:
        """Record that the externalId exists at the service with other content."""
        message = "a payout with this externalId exists with different " + ", ".join(differences)
        await self.call(self._ledger.mark_conflict, external_id, message, worker_id=self._worker_id)

    async def release_for_retry(self, external_id: str) -> None:
        """Hand a row that provably has no payout back to the queue."""
        await self.call(self._ledger.release_for_retry, external_id, worker_id=self._worker_id)
