"""Follow submitted payouts to a final status: webhooks first, polling by id as the fallback.

The webhook receiver (maybe another process) writes statuses into the same ledger; a payout with
news within `quiet_period` is not polled. While webhooks keep moving the batch's payouts, that
wait grows to `busy_quiet_period`: a payout not heard from is then most likely still queued in
the webhook channel, and polling it would only load the service (and a shared machine) further.
The others are fetched by id with exponential backoff per payout (kept in the ledger, so several
trackers agree) until every row is final or the deadline passes; the rows still open are then
reported as pending. Each page of due payouts is taken (`Ledger.take_polls_due`), so several
trackers of one batch (one per pay run) poll different payouts instead of each GETting all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import NotFoundError, PaymentsApiError
from payflow.api.models import Payout
from payflow.api.retry import exponential_backoff
from payflow.ledger import EventSource, Ledger, PayoutRef, StatusUpdate
from payflow.ledger.states import UNFINISHED_STATES
from payflow.stopping import STOP

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


@dataclass(frozen=True, slots=True)
class Fetched:
    """The service's answer about one payout: the payout, 404 (`missing`), or no answer."""

    payout: Payout | None
    missing: bool = False

    @property
    def answered(self) -> bool:
        """True when the service said something definite (found or not found)."""
        return self.payout is not None or self.missing


async def fetch_payout(
    client: AsyncPayoutsClient, external_id: str, payout_id: str | None
) -> Fetched:
    """GET the payout by id, or by externalId without one; the client retries transient errors."""
    try:
        if payout_id is not None:
            return Fetched(await client.get_payout(payout_id))
        found = await client.find_payout_by_external_id(external_id)
    except NotFoundError:
        return Fetched(None, missing=True)
    except PaymentsApiError as exc:
        logger.warning("fetch of %s failed: %s", external_id, type(exc).__name__)
        return Fetched(None)
    return Fetched(found, missing=found is None)


async def _poll_one(client: AsyncPayoutsClient, ref: PayoutRef) -> tuple[PayoutRef, Payout | None]:
    return ref, (await fetch_payout(client, ref.external_id, ref.payout_id)).payout


async def track_batch(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    *,
    deadline: float,
    poll_interval: float = 2.0,
    poll_max_interval: float = 60.0,
    quiet_period: float = 5.0,
    busy_quiet_period: float = 30.0,
    on_progress: ProgressCallback | None = None,
) -> TrackResult:
    """Poll until every payout of the batch is final or `deadline` seconds have passed."""
    ends_at = time.monotonic() + deadline
    backoff = _Backoff(poll_interval, poll_max_interval)
    quiet = timedelta(seconds=quiet_period)
    busy_quiet = timedelta(seconds=max(quiet_period, busy_quiet_period))
    # A page is taken, not just read: a second tracker of the batch (one per pay run) takes the
    # next page instead of GETting the same payouts. Held past any schedule written below.
    hold = max(busy_quiet, timedelta(seconds=poll_max_interval))
    while True:
        now = datetime.now(UTC)
        due = await asyncio.to_thread(ledger.take_polls_due, batch_id, now, POLL_BATCH, hold)
        busy = bool(due) and await asyncio.to_thread(_webhooks_coming, ledger, batch_id, quiet)
        wait = busy_quiet if busy else quiet
        # News (creation, a webhook, an earlier poll) within the wait: look later.
        recent: list[PayoutRef] = []
        stale: list[PayoutRef] = []
        for ref in due:
            heard = ref.last_status_at is not None and now - ref.last_status_at < wait
            (recent if heard else stale).append(ref)
        results = await asyncio.gather(*(_poll_one(client, ref) for ref in stale))
        await asyncio.to_thread(_record_polls, ledger, results, recent, backoff, wait, quiet)
        counts = await asyncio.to_thread(ledger.batch_summary, batch_id)
        if on_progress is not None:
            on_progress(counts)
        if not any(counts.get(state.value, 0) for state in UNFINISHED_STATES):
            return TrackResult(counts)
        remaining = ends_at - time.monotonic()
        if remaining <= 0 or STOP.requested():
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


def _webhooks_coming(ledger: Ledger, batch_id: str, quiet: timedelta) -> bool:
    """A webhook moved a payout of the batch within the quiet period (never, with none)."""
    return bool(quiet) and ledger.last_webhook_move(batch_id, datetime.now(UTC) - quiet) is not None


class _Backoff:
    """Per-payout poll intervals: first, then doubling up to the ceiling."""

    def __init__(self, first: float, ceiling: float) -> None:
        self._first = first
        self._ceiling = ceiling
        self._attempts: dict[str, int] = {}

    def next(self, external_id: str) -> timedelta:
        attempt = self._attempts.get(external_id, 0) + 1
        self._attempts[external_id] = attempt
        return timedelta(seconds=exponential_backoff(attempt, self._first, self._ceiling))


def _record_polls(
    ledger: Ledger,
    results: list[tuple[PayoutRef, Payout | None]],
    recent: list[PayoutRef],
    backoff: _Backoff,
    wait: timedelta,
    quiet: timedelta,
) -> None:
    now = datetime.now(UTC)
    # Next polls are written together: one transaction per page, not one per payout.
    schedule: list[tuple[str, datetime]] = []
    for ref in recent:
        assert ref.last_status_at is not None
        # Looked at again within the quiet period at most: the webhooks may stop coming by then.
        schedule.append((ref.external_id, min(ref.last_status_at + wait, now + quiet)))
    # Statuses too: one transaction for the page's news.
    news = [
        (ref, payout)
        for ref, payout in results
        if payout is not None and not _already_recorded(ref, payout)
    ]
    updates = [
        StatusUpdate(
            status=payout.status,
            message=payout.status_message,
            source=EventSource.POLL,
            external_id=ref.external_id,
            payout_id=payout.id,
            amount=payout.amount,
            currency=payout.currency,
        )
        for ref, payout in news
    ]
    for (ref, _), outcome in zip(news, ledger.record_statuses(updates), strict=True):
        if isinstance(outcome, Exception):
            logger.error("poll of %s not recorded: %s", ref.external_id, outcome)
    for ref, payout in results:
        if payout is not None and payout.is_final:
            continue  # a final status ends polling: no schedule to write
        schedule.append((ref.external_id, now + backoff.next(ref.external_id)))
    ledger.schedule_polls(schedule)


def _already_recorded(ref: PayoutRef, payout: Payout) -> bool:
    """The ledger already holds this status and payout id: recording it would change nothing."""
    return payout.status == ref.state.value and payout.id == ref.payout_id
