"""Submit claimed rows exactly once (invariant 1 of ../shared/design.md).

Per row: the ledger claim has already marked it SUBMITTING; `protocol.create_exactly_once`
(shared with refunds) decides, and this module records the decision: created or adopted, CONFLICT,
SUBMIT_REJECTED with the service's message, left SUBMITTING for the next run (lookup failed), or
back in the queue (out of attempts, provably not created).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from payflow.api import AsyncPayoutsClient
from payflow.api.calls import UnusablePathSegment, segment
from payflow.api.errors import AuthError
from payflow.api.models import Payout
from payflow.ledger import ClaimedPayout, LeaseLost, Ledger
from payflow.paying.outcomes import Outcome, SubmitStats
from payflow.paying.protocol import (
    Conflicting,
    Created,
    CreateOps,
    Refused,
    StopSignal,
    Unresolved,
    create_exactly_once,
)
from payflow.paying.recorder import LedgerWriter
from payflow.paying.requests import build_payout_request, payout_differences
from payflow.redact import mask_requisites

logger = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 4
# Stop sending this long before the lease ends, so a request in flight lands inside it.
LEASE_MARGIN = timedelta(seconds=30)


class _RowSubmitter:
    """Runs the shared protocol for each row of one claimed chunk and records the decisions."""

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
        self.stop = StopSignal()
        self._posted: set[str] = set()  # rows whose POST may have reached the service

    @property
    def auth_error(self) -> AuthError | None:
        """The token refusal that stopped the chunk, if any."""
        return self.stop.auth_error

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
        request = build_payout_request(row.instruction, callback_url=self._callback_url)
        # A payout that could not be looked up by its externalId could never be resolved after
        # an ambiguous POST (invariant 1): such a row is never sent.
        segment(row.external_id, "externalId")

        async def create(may_send: Callable[[], bool]) -> Payout:
            self._posted.add(row.external_id)
            return await self._client.create_payout(request, may_send)

        ops = CreateOps(
            row.external_id,
            create=create,
            find=lambda: self._client.find_payout_by_external_id(row.external_id),
            differences=lambda found: payout_differences(row.instruction, found),
        )
        decision = await create_exactly_once(
            ops,
            needs_resolution=row.needs_resolution,
            max_attempts=self._max_attempts,
            stop=self.stop,
            lease_left=lambda: _lease_left(row),
        )
        if isinstance(decision, Created):
            await self._writer.mark_created(row.external_id, decision.obj, adopted=decision.adopted)
            return Outcome.ADOPTED if decision.adopted else Outcome.CREATED
        if isinstance(decision, Conflicting):
            logger.warning(
                "externalId %s exists with different %s (recipient %s): CONFLICT",
                row.external_id,
                ", ".join(decision.differences),
                mask_requisites(row.instruction.requisites),
            )
            await self._writer.mark_conflict(row.external_id, decision.differences)
            return Outcome.CONFLICT
        if isinstance(decision, Refused):
            await self._writer.mark_submit_rejected(row.external_id, decision.message)
            return Outcome.REJECTED
        if isinstance(decision, Unresolved):
            return Outcome.UNRESOLVED
        # Every lookup said "not found": sending later is safe, so hand the row back.
        await self._writer.release_for_retry(row.external_id, decision.reason)
        return Outcome.DEFERRED


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
