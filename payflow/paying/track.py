"""Follow submitted payouts to a final status: webhooks first, polling by id as the fallback.

The webhook receiver (maybe another process) writes statuses into the same ledger; a payout with
news within `quiet_period` is not polled. The others are fetched by id with exponential backoff
per payout (kept in the ledger, so several trackers agree) until every row is final or the
deadline passes; the rows still open are then reported as pending.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import PaymentsApiError
from payflow.api.models import Payout
from payflow.ledger import EventSource, IllegalTransition, Ledger, LedgerError, PayoutRef
from payflow.ledger.states import UNFINISHED_STATES

logger = logging.getLogger(__name__)

POLL_BATCH = 500
TICK = 0.5  # seconds between looks at the ledger while waiting


@dataclass(frozen=True, slots=True)
class TrackResult:
    """Where a batch stands when tracking ended."""

    counts: dict[str, int]  # state -> rows
    pending_external_ids: list[str] = field(default_factory=list)
    timed_out: bool = False

    @property
    def all_final(self) -> bool:
        """True when no row is waiting for a status any more."""
        return not self.pending_external_ids


ProgressCallback = Callable[[dict[str, int]], None]


async def _poll_one(client: AsyncPayoutsClient, ref: PayoutRef) -> tuple[PayoutRef, Payout | None]:
    try:
        if ref.payout_id is not None:
            return ref, await client.get_payout(ref.payout_id)
        return ref, await client.find_payout_by_external_id(ref.external_id)
    except PaymentsApiError as exc:
        logger.warning("poll of %s failed: %s", ref.external_id, type(exc).__name__)
        return ref, None


async def track_batch(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    *,
    deadline: float,
    poll_interval: float = 2.0,
    poll_max_interval: float = 60.0,
    quiet_period: float = 5.0,
    on_progress: ProgressCallback | None = None,
) -> TrackResult:
    """Poll until every payout of the batch is final or `deadline` seconds have passed."""
    ends_at = time.monotonic() + deadline
    backoff = _Backoff(poll_interval, poll_max_interval)
    quiet = timedelta(seconds=quiet_period)
    while True:
        now = datetime.now(UTC)
        due = await asyncio.to_thread(ledger.payouts_to_poll, batch_id, now, POLL_BATCH)
        # News (creation, a webhook, an earlier poll) within the quiet period: look later.
        recent = [r for r in due if r.last_status_at is not None and now - r.last_status_at < quiet]
        stale = [r for r in due if r not in recent]
        results = await asyncio.gather(*(_poll_one(client, ref) for ref in stale))
        await asyncio.to_thread(_record_polls, ledger, results, recent, backoff, quiet)
        counts = await asyncio.to_thread(ledger.batch_summary, batch_id)
        if on_progress is not None:
            on_progress(counts)
        if not any(counts.get(state.value, 0) for state in UNFINISHED_STATES):
            return TrackResult(counts)
        remaining = ends_at - time.monotonic()
        if remaining <= 0:
            pending = await asyncio.to_thread(ledger.unfinished, batch_id)
            return TrackResult(counts, sorted(r.external_id for r in pending), timed_out=True)
        # A full page means more are due now; otherwise wait a little for news or due polls.
        pause = 0.0 if len(due) == POLL_BATCH else min(TICK, poll_interval, remaining)
        await asyncio.sleep(pause)


async def refresh_batch(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str, *, poll_interval: float = 60.0
) -> TrackResult:
    """Poll every non-final payout of the batch once (`payflow status --refresh`), forward only.

    The same poller as `track_batch`: each payout is made due now, then polled page by page; a
    payout still open is next due after `poll_interval`, so no page is polled twice."""
    started = await asyncio.to_thread(ledger.make_polls_due, batch_id)
    while True:
        result = await track_batch(
            client,
            ledger,
            batch_id,
            deadline=0,
            poll_interval=poll_interval,
            poll_max_interval=poll_interval,
            quiet_period=0,
        )
        if not started or result.all_final:
            return result
        due = await asyncio.to_thread(ledger.payouts_to_poll, batch_id, datetime.now(UTC), 1)
        if not due:
            return result


class _Backoff:
    """Per-payout poll intervals: first, then doubling up to the ceiling."""

    def __init__(self, first: float, ceiling: float) -> None:
        self._first = first
        self._ceiling = max(first, ceiling)
        self._current: dict[str, float] = {}

    def next(self, external_id: str) -> timedelta:
        previous = self._current.get(external_id)
        interval = self._first if previous is None else min(self._ceiling, previous * 2)
        self._current[external_id] = interval
        return timedelta(seconds=interval)


def _record_polls(
    ledger: Ledger,
    results: list[tuple[PayoutRef, Payout | None]],
    recent: list[PayoutRef],
    backoff: _Backoff,
    quiet: timedelta,
) -> None:
    now = datetime.now(UTC)
    for ref in recent:
        assert ref.last_status_at is not None
        ledger.schedule_poll(ref.external_id, ref.last_status_at + quiet)
    for ref, payout in results:
        if payout is not None:
            try:
                ledger.record_status(
                    external_id=ref.external_id,
                    payout_id=payout.id,
                    status=payout.status,
                    status_message=payout.status_message,
                    source=EventSource.POLL,
                )
            except (IllegalTransition, LedgerError) as exc:
                logger.error("poll of %s not recorded: %s", ref.external_id, exc)
            if payout.is_final:
                continue  # a final status ends polling: no schedule to write
        ledger.schedule_poll(ref.external_id, now + backoff.next(ref.external_id))
