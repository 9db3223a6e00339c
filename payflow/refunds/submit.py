"""Send each claimed refund exactly once, with the protocol payouts use (payflow.paying.protocol).

GET /v1/refunds/external/{externalId} settles every ambiguous answer. A 409 whose lookup finds
nothing is the service's final word (order not refundable, a refund under another id, balance):
the row is SUBMIT_REJECTED with the service's message and never sent again.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from payflow.api import AsyncPayoutsClient
from payflow.api.refunds import Refund, RefundRequest
from payflow.ledger import ClaimedRefund, CreatedRefund, EventSource, LeaseLost, Ledger, RowState
from payflow.model import RefundInstruction
from payflow.paying.batch import ChunkLoop, ChunkResult
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
from payflow.stopping import STOP

logger = logging.getLogger(__name__)

DEFAULT_CHUNK = 200
DEFAULT_MAX_ATTEMPTS = 4
LEASE_MARGIN = timedelta(seconds=30)


def build_refund_request(item: RefundInstruction, *, callback_url: str | None) -> RefundRequest:
    """The POST /v1/refunds body; the amount is sent only when the file named it."""
    return RefundRequest(
        order_id=item.order_id,
        amount=item.amount if item.amount_given else None,
        external_id=item.external_id,
        reason=item.reason,
        callback_url=callback_url or item.callback_url,
    )


def refund_differences(item: RefundInstruction, refund: Refund) -> list[str]:
    """Fields where a found refund differs from the row (names only); empty: the same refund."""
    differences = []
    if refund.order_id is not None and refund.order_id.lower() != item.order_id.lower():
        differences.append("orderId")
    if refund.amount is not None and refund.amount != item.amount:
        differences.append("amount")
    return differences


def _created(refund: Refund) -> CreatedRefund:
    return CreatedRefund(
        refund.id,
        refund.status,
        refund.debit_amount,
        refund.debit_currency,
        refund.debit_basis,
        refund.status_message,
    )


async def _submit_one(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    row: ClaimedRefund,
    *,
    worker_id: str,
    callback_url: str | None,
    max_attempts: int,
    stop: StopSignal,
) -> Outcome:
    book, ext = ledger.refunds, row.external_id
    request = build_refund_request(row.instruction, callback_url=callback_url)
    ops = CreateOps(
        ext,
        create=lambda may_send: client.create_refund(request, may_send),
        find=lambda: client.find_refund_by_external_id(ext),
        differences=lambda found: refund_differences(row.instruction, found),
        conflict_is_final=True,
    )
    decision = await create_exactly_once(
        ops,
        needs_resolution=row.needs_resolution,
        max_attempts=max_attempts,
        stop=stop,
        lease_left=lambda: datetime.now(UTC) + LEASE_MARGIN < row.lease_until,
    )
    try:
        if isinstance(decision, Created):
            source = EventSource.RESOLVE if decision.adopted else EventSource.SUBMIT
            book.mark_created(ext, _created(decision.obj), source=source)
            return Outcome.ADOPTED if decision.adopted else Outcome.CREATED
        if isinstance(decision, Conflicting):
            message = "externalId exists with different " + ", ".join(decision.differences)
            book.mark_outcome(ext, RowState.CONFLICT, message, worker_id=worker_id)
            return Outcome.CONFLICT
        if isinstance(decision, Refused):
            book.mark_outcome(ext, RowState.SUBMIT_REJECTED, decision.message, worker_id=worker_id)
            return Outcome.REJECTED
        if isinstance(decision, Unresolved):
            return Outcome.UNRESOLVED
        book.mark_outcome(ext, RowState.VALIDATED, "not found by lookup", worker_id=worker_id)
        return Outcome.DEFERRED
    except LeaseLost:
        logger.warning("lease of refund %s lost; left to the worker holding it", ext)
        return Outcome.UNRESOLVED


async def submit_refund_chunk(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    *,
    worker_id: str,
    callback_url: str | None,
    chunk_size: int = DEFAULT_CHUNK,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> ChunkResult:
    """Claim one chunk (crashed SUBMITTING rows first) and send each row exactly once.

    Raises the client's AuthError after the chunk when the token was refused."""
    claimed = ledger.refunds.claim(batch_id, worker_id, chunk_size)
    stop = StopSignal()
    outcomes = await asyncio.gather(
        *(
            _submit_one(
                client,
                ledger,
                row,
                worker_id=worker_id,
                callback_url=callback_url,
                max_attempts=max_attempts,
                stop=stop,
            )
            for row in claimed
        )
    )
    stats = SubmitStats()
    for row, outcome in zip(claimed, outcomes, strict=True):
        stats.add(outcome, row.external_id)
    if stop.auth_error is not None:
        raise stop.auth_error
    if stats.unresolved:
        # Rows left SUBMITTING are resolved by the next claim once their lease is released.
        ledger.refunds.release_stale_leases(batch_id, worker_id)
    return ChunkResult(len(claimed), stats)


async def submit_refunds(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    *,
    worker_id: str,
    callback_url: str | None,
    chunk_size: int = DEFAULT_CHUNK,
) -> SubmitStats:
    """Send chunks until the ledger has nothing left to claim; the payouts' ChunkLoop decides
    when the service is failing rows now and the next run should try."""
    loop = ChunkLoop()
    # After a stop signal no new chunk is claimed (a claimed row's POST is asked at send time).
    while not STOP.requested() and loop.goes_on_after(
        await submit_refund_chunk(
            client,
            ledger,
            batch_id,
            worker_id=worker_id,
            callback_url=callback_url,
            chunk_size=chunk_size,
        )
    ):
        pass
    return loop.total
