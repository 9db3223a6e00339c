"""Follow refunds to a final status and their orders to REFUND: webhooks first, polling after.

The receiver (`payflow webhooks`, maybe another process) records REFUND_UPDATE and ORDER_UPDATE
in the ledger. Whatever is still open after each wait is fetched by id, the wait doubling up to
`max_interval`, until nothing is open or the deadline passes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import PaymentsApiError
from payflow.ledger import EventSource, IllegalTransition, Ledger, LedgerError, RefundRef
from payflow.stopping import STOP, sleep_unless_stopped

logger = logging.getLogger(__name__)

POLL_CONCURRENCY = 16


@dataclass(frozen=True, slots=True)
class RefundTrackResult:
    """Where the batch stands when tracking ended."""

    counts: dict[str, int]
    pending_external_ids: list[str] = field(default_factory=list)
    timed_out: bool = False


async def _poll_refund(client: AsyncPayoutsClient, ledger: Ledger, ref: RefundRef) -> None:
    try:
        if ref.refund_id is not None:
            refund = await client.get_refund(ref.refund_id)
        else:
            found = await client.find_refund_by_external_id(ref.external_id)
            if found is None:
                return
            refund = found
        ledger.refunds.record_status(
            external_id=ref.external_id,
            refund_id=refund.id,
            status=refund.status,
            source=EventSource.POLL,
            status_message=refund.status_message,
            debit_amount=refund.debit_amount,
            debit_currency=refund.debit_currency,
            debit_basis=refund.debit_basis,
        )
    except PaymentsApiError as exc:
        logger.warning("poll of refund %s failed: %s", ref.external_id, type(exc).__name__)
    except (IllegalTransition, LedgerError) as exc:
        logger.error("refund status not recorded: %s", exc)


async def _poll_order(client: AsyncPayoutsClient, ledger: Ledger, ref: RefundRef) -> None:
    try:
        order = await client.get_order(ref.order_id)
    except PaymentsApiError as exc:
        logger.warning("poll of order %s failed: %s", ref.order_id, type(exc).__name__)
        return
    if order.status:
        ledger.refunds.record_order_status(ref.order_id, order.status, source=EventSource.POLL)


Job = Coroutine[Any, Any, None]


async def _gather_bounded(jobs: list[Job]) -> None:
    slots = asyncio.Semaphore(POLL_CONCURRENCY)

    async def bounded(job: Job) -> None:
        async with slots:
            await job

    await asyncio.gather(*(bounded(job) for job in jobs))


async def refresh_refunds(client: AsyncPayoutsClient, ledger: Ledger, batch_id: str) -> None:
    """Ask the service once about every refund of the batch it holds that is not final, and
    every order of a COMPLETED refund not seen in REFUND yet; recorded forward only. Rows with
    no refund id yet (never sent, or a stopped run's) are left to the next `payflow refund`,
    whose claim resolves them by lookup under its lease. Orders are asked after the refunds, so
    a refund found COMPLETED has its order asked in the same round."""
    book = ledger.refunds
    open_refunds = [r for r in book.unfinished(batch_id) if r.refund_id is not None]
    await _gather_bounded([_poll_refund(client, ledger, r) for r in open_refunds])
    await _gather_bounded(
        [_poll_order(client, ledger, r) for r in book.awaiting_order_status(batch_id)]
    )


async def track_refunds(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    *,
    deadline: float,
    first_wait: float = 1.0,
    max_interval: float = 30.0,
) -> RefundTrackResult:
    """Wait for webhooks, poll what is still open, until all is final or `deadline` seconds."""
    book = ledger.refunds
    end = time.monotonic() + deadline
    wait = first_wait
    while True:
        open_refunds = [r for r in book.unfinished(batch_id) if r.refund_id is not None]
        orders = book.awaiting_order_status(batch_id)
        if not open_refunds and not orders:
            break
        remaining = end - time.monotonic()
        if remaining <= 0 or STOP.requested():
            break
        await sleep_unless_stopped(min(wait, remaining))
        if STOP.requested():
            break  # the next run follows what is left
        wait = min(wait * 2, max_interval)
        await refresh_refunds(client, ledger, batch_id)
    pending = [r.external_id for r in book.unfinished(batch_id)]
    return RefundTrackResult(book.summary(batch_id), pending, timed_out=bool(pending))
