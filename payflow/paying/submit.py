"""Submit claimed rows exactly once (invariant 1 of ../shared/design.md).

Per row: the ledger claim has already marked it SUBMITTING. POST once; on any ambiguous outcome
(timeout, dropped connection, 5xx, 429, 409) look the payout up by externalId before any retry:
found -> adopt it, or CONFLICT when its content differs; not found -> retrying is safe. A 4xx is
final (SUBMIT_REJECTED with the service's message). A row whose lookup keeps failing stays
SUBMITTING for the next run, which resolves it first; a row out of attempts goes back to the queue.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from payflow.api import AsyncPayoutsClient
from payflow.api.calls import UnusablePathSegment, segment
from payflow.api.errors import (
    AmbiguousError,
    AuthError,
    ConflictError,
    PaymentsApiError,
    RateLimitedError,
    RejectedError,
    TransientError,
)
from payflow.ledger import ClaimedPayout, LeaseLost, Ledger
from payflow.paying.outcomes import Outcome, SubmitStats
from payflow.paying.recorder import LedgerWriter
from payflow.paying.requests import build_payout_request, payout_differences
from payflow.redact import mask_requisites

logger = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 4
BACKOFF_BASE = 0.2
BACKOFF_CAP = 10.0
RETRIABLE = (AmbiguousError, TransientError, ConflictError)
# Stop sending this long before the lease ends, so a request in flight lands inside it.
LEASE_MARGIN = timedelta(seconds=30)


def backoff_delay(attempt: int, retry_after: float | None = None) -> float:
    """Seconds to wait before looking up after failed attempt `attempt` (1-based), with jitter."""
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, BACKOFF_CAP * 6)
    ceiling = min(BACKOFF_CAP, BACKOFF_BASE * 2.0 ** (attempt - 1))
    return ceiling / 2 + random.uniform(0, ceiling / 2)


class _RowSubmitter:
    """Runs the protocol for each row of one claimed chunk and collects the outcomes."""

    def __init__(
        self,
        client: AsyncPayoutsClient,
        writer: LedgerWriter,
        *,
        callback_url: str | None,
        max_attempts: int,
    ) -> None:
        self._client = client
        self._writer = writer
        self._callback_url = callback_url
        self._max_attempts = max_attempts
        self.auth_error: AuthError | None = None
        self._posted: set[str] = set()  # rows whose POST may have reached the service

    async def run(self, row: ClaimedPayout) -> Outcome:
        try:
            return await self._run(row)
        except LeaseLost:
            # Another worker took the row over after our lease ran out; it resolves the row.
            logger.warning("lease of %s lost; left to the worker holding it", row.external_id)
            return Outcome.UNRESOLVED
        except Exception as exc:
            return await self._set_aside(row, exc)

    async def _set_aside(self, row: ClaimedPayout, exc: Exception) -> Outcome:
        """Settle a row that failed in a way the protocol does not know, without the others."""
        # The type only: a message could quote the row's requisites (invariant 6).
        reason = type(exc).__name__
        if row.needs_resolution or row.external_id in self._posted:
            # A payout may exist: only a lookup may settle the row, so the next run does.
            logger.error("%s failed after a POST (%s); left SUBMITTING", row.external_id, reason)
            return Outcome.UNRESOLVED
        logger.error("%s could not be sent (%s); set aside", row.external_id, reason)
        if isinstance(exc, UnusablePathSegment):
            message = f"not sent: {exc}, so it could never be looked up"
        else:
            message = f"not sent: the row could not be turned into a request ({reason})"
        await self._writer.mark_submit_rejected(row.external_id, message)
        return Outcome.REJECTED

    async def _run(self, row: ClaimedPayout) -> Outcome:
        if row.needs_resolution:
            outcome = await self._resolve(row)
            if outcome is not Outcome.NOT_FOUND:
                return outcome
        request = build_payout_request(row.instruction, callback_url=self._callback_url)
        # A payout that could not be looked up by its externalId could never be resolved after
        # an ambiguous POST (invariant 1): such a row is never sent.
        segment(row.external_id, "externalId")
        for attempt in range(1, self._max_attempts + 1):
            if self.auth_error is not None:
                break
            if not _lease_left(row):
                # Past our lease another worker may take the row over: never POST then.
                return Outcome.UNRESOLVED
            self._posted.add(row.external_id)
            try:
                payout = await self._client.create_payout(request)
            except AuthError as exc:
                if exc.status_code == 403:
                    # A destination not enabled for this merchant: final for this row only.
                    await self._writer.mark_submit_rejected(row.external_id, exc.message)
                    return Outcome.REJECTED
                # A refused token: nothing was accepted, and the whole run must stop.
                self.auth_error = exc
                break
            except RETRIABLE as exc:
                retry_after = exc.retry_after if isinstance(exc, RateLimitedError) else None
                await asyncio.sleep(backoff_delay(attempt, retry_after))
                outcome = await self._resolve(row)
                if outcome is not Outcome.NOT_FOUND:
                    return outcome
                continue
            except RejectedError as exc:
                await self._writer.mark_submit_rejected(row.external_id, exc.message)
                return Outcome.REJECTED
            await self._writer.mark_created(row.external_id, payout, adopted=False)
            return Outcome.CREATED
        # Every lookup said "not found": sending later is safe, so hand the row back.
        await self._writer.release_for_retry(row.external_id)
        return Outcome.DEFERRED

    async def _resolve(self, row: ClaimedPayout) -> Outcome:
        """Look the row up by externalId and settle it; NOT_FOUND means a POST is safe."""
        try:
            found = await self._client.find_payout_by_external_id(row.external_id)
        except PaymentsApiError as exc:
            # Cannot tell whether it exists: the row stays SUBMITTING for the next run.
            logger.warning(
                "lookup of %s failed (%s); left SUBMITTING", row.external_id, type(exc).__name__
            )
            return Outcome.UNRESOLVED
        if found is None:
            return Outcome.NOT_FOUND
        differences = payout_differences(row.instruction, found)
        if differences:
            logger.warning(
                "externalId %s exists with different %s (recipient %s): CONFLICT",
                row.external_id,
                ", ".join(differences),
                mask_requisites(row.instruction.requisites),
            )
            await self._writer.mark_conflict(row.external_id, differences)
            return Outcome.CONFLICT
        await self._writer.mark_created(row.external_id, found, adopted=True)
        return Outcome.ADOPTED


def _lease_left(row: ClaimedPayout) -> bool:
    return datetime.now(UTC) + LEASE_MARGIN < row.lease_until


async def submit_claimed(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    claimed: Sequence[ClaimedPayout],
    *,
    callback_url: str | None,
    worker_id: str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> SubmitStats:
    """Run the exactly-once protocol on rows `worker_id` has claimed; the client throttles.

    Raises the client's AuthError after the chunk when the service refused the token."""
    stats = SubmitStats()
    if not claimed:
        return stats
    async with LedgerWriter(ledger, worker_id) as writer:
        submitter = _RowSubmitter(
            client, writer, callback_url=callback_url, max_attempts=max_attempts
        )
        outcomes = await asyncio.gather(*(submitter.run(row) for row in claimed))
    for row, outcome in zip(claimed, outcomes, strict=True):
        stats.add(outcome, row.external_id)
    if submitter.auth_error is not None:
        raise submitter.auth_error
    return stats
