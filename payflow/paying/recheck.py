"""`payflow status --refresh` on final payouts still inside the correction window: the
platform may move a COMPLETED payout after the fact without a webhook (design invariant 5),
so the rows it finished recently are asked about again and the service's word is kept."""

from __future__ import annotations

import asyncio
from datetime import datetime

from payflow.api import AsyncPayoutsClient
from payflow.ledger import EventSource, Ledger, StatusUpdate
from payflow.paying.track import fetch_payout

CONCURRENCY = 8


async def recheck_final(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str, since: datetime
) -> int:
    """GET every final payout of the batch with news since `since` once and keep what the
    service says (forward moves recorded; one the ledger cannot follow kept as the service's
    word); returns how many were asked about."""
    refs = await asyncio.to_thread(ledger.final_since, batch_id, since)
    slots = asyncio.Semaphore(CONCURRENCY)

    async def ask(external_id: str, payout_id: str | None) -> StatusUpdate | None:
        async with slots:
            payout = (await fetch_payout(client, external_id, payout_id)).payout
        if payout is None:
            return None
        return StatusUpdate(
            status=payout.status,
            message=payout.status_message,
            source=EventSource.POLL,
            external_id=external_id,
            payout_id=payout.id,
            amount=payout.amount,
            currency=payout.currency,
        )

    answers = await asyncio.gather(*(ask(r.external_id, r.payout_id) for r in refs))
    updates = [update for update in answers if update is not None]
    if updates:
        # An update the ledger cannot follow comes back as its error: its word is kept anyway.
        await asyncio.to_thread(ledger.record_statuses, updates)
    return len(refs)
