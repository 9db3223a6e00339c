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
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import (
    AmbiguousError,
    AuthError,
    ConflictError,
    PaymentsApiError,
    RejectedError,
    TransientError,
)
from payflow.api.retry import RetryPolicy
from payflow.ledger import ClaimedPayout, LeaseLost, Ledger
from payflow.paying.outcomes import Outcome, SubmitStats
from payflow.paying.recorder import LedgerWriter
from payflow.paying.requests import build_payout_request, payout_differences
from payflow.redact import mask_requisites
from payflow.stopping import STOP

logger = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 4
# The client's retry policy decides the wait before the lookup that follows an ambiguous POST.
SUBMIT_RETRY = RetryPolicy(base_delay=0.2, max_delay=10.0, max_retry_after=60.0)
RETRIABLE = (AmbiguousError, TransientError, ConflictError)
# Stop sending this long before the lease ends, so a request in flight lands inside it.
LEASE_MARGIN = timedelta(seconds=30)


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

    async def run(self, row: ClaimedPayout) -> Outcome:
        try:
            return await self._run(row)
        except LeaseLost:
            # Another worker took the row over after our lease ran out; it resolves the row.
            logger.warning("lease of %s lost; left to the worker holding it", row.external_id)
            return Outcome.UNRESOLVED

    async def _run(self, row: ClaimedPayout) -> Outcome:
        if row.needs_resolution:
            outcome = await self._resolve(row)
            if outcome is not Outcome.NOT_FOUND:
                return outcome
        request = build_payout_request(row.instruction, callback_url=self._callback_url)
        for attempt in range(1, self._max_attempts + 1):
            if self.auth_error is not None:
                break
            if not _lease_left(row) or STOP.requested():
                # Past our lease another worker may take the row over: never POST then. After a
                # stop signal the row stays SUBMITTING: the next run looks it up, then sends.
                return Outcome.UNRESOLVED
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
                await asyncio.sleep(SUBMIT_RETRY.delay(exc, attempt))
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
