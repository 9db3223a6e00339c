"""Record payout webhooks many per ledger transaction (group commit).

One commit per webhook made the receiver the slowest part of a large run: a 5,000-row batch
brings 10,000 webhooks, and each commit waits for the disk. Here every request queues its event
and waits; one writer takes whatever has queued while the previous transaction committed (up to
`max_rows`) and records it with `Ledger.record_statuses`, in arrival order and forward only. A
request is answered only after its transaction committed, so a 200 still means "stored"; at low
traffic a batch is one event and nothing waits longer than before.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from payflow.api.webhooks import PayoutEvent
from payflow.ledger import EventSource, Ledger, StatusUpdate, UnknownPayout
from payflow.links.store import record_link_event

logger = logging.getLogger(__name__)

MAX_ROWS = 500


@dataclass(slots=True)
class _Waiting:
    event: PayoutEvent
    answer: asyncio.Future[bool]


class GroupRecorder:
    """Queues payout events and writes them in batches; `await record(event)` gives its result."""

    def __init__(self, ledger: Ledger, *, max_rows: int = MAX_ROWS) -> None:
        self._ledger = ledger
        self._max_rows = max_rows
        self._queue: asyncio.Queue[_Waiting] | None = None
        self._writer: asyncio.Task[None] | None = None

    async def record(self, event: PayoutEvent) -> bool:
        """Record one event forward only; False when nothing moved or the payout is not ours."""
        if self._queue is None or self._writer is None or self._writer.done():
            # Started by the first request, in the server's own event loop.
            self._queue = asyncio.Queue()
            self._writer = asyncio.create_task(self._write_forever(self._queue))
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Waiting(event, answer))
        return await answer

    async def close(self) -> None:
        """Stop the writer after the events already queued are written."""
        if self._queue is not None and self._writer is not None and not self._writer.done():
            await self._queue.join()
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        self._writer = None

    async def _write_forever(self, queue: asyncio.Queue[_Waiting]) -> None:
        while True:
            batch = [await queue.get()]
            while len(batch) < self._max_rows and not queue.empty():
                batch.append(queue.get_nowait())
            try:
                results = await asyncio.to_thread(self._write, [item.event for item in batch])
            except Exception as exc:  # the transaction failed: every request in it gets a 500
                for item in batch:
                    if not item.answer.done():
                        item.answer.set_exception(exc)
            else:
                for item, result in zip(batch, results, strict=True):
                    if not item.answer.done():
                        item.answer.set_result(result)
            finally:
                for _ in batch:
                    queue.task_done()

    def _write(self, events: list[PayoutEvent]) -> list[bool]:
        updates = [
            StatusUpdate(
                status=event.status,
                message=event.status_message,
                source=EventSource.WEBHOOK,
                external_id=event.external_id,
                payout_id=event.payout_id,
                amount=event.amount,
            )
            for event in events
        ]
        results = self._ledger.record_statuses(updates)
        return [_settle(self._ledger, e, r) for e, r in zip(events, results, strict=True)]


def _settle(ledger: Ledger, event: PayoutEvent, result: bool | Exception) -> bool:
    if isinstance(result, bool):
        return result
    if isinstance(result, UnknownPayout):
        if event.external_id and record_link_event(ledger, event):
            return True  # a payout a recipient created through a payout link
        # Another merchant system's payout, or one this ledger never sent: nothing to record.
        logger.info("webhook for payout %s not in this ledger; ignored", event.payout_id)
        return False
    logger.error("webhook not recorded: %s", result)
    return False
