"""Following the recipients' payouts: a lookup by externalId for every row worth one.

Webhooks reach the same rows through the receiver (`record_link_event`); this is the fallback
and what a report runs first, so "expired unused" is only said after the service said 404.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from payflow.api import AsyncPayoutsClient
from payflow.api.models import Payout
from payflow.ledger import RowState
from payflow.links.store import LinkStore


@dataclass(frozen=True)
class RefreshResult:
    """Lookups made, rows that moved, rows with no payout at the service yet, and the rows the
    ledger holds as made (CREATED, PROCESSING, COMPLETED) the service answered 404 for."""

    looked_up: int
    moved: int
    not_found: int
    unconfirmed: tuple[str, ...] = ()


async def refresh_links(
    client: AsyncPayoutsClient, store: LinkStore, batch_id: str, *, concurrency: int = 16
) -> RefreshResult:
    """Look up each unfinished, COMPLETED or opened row by externalId and record what the
    service says."""
    tracked = store.to_track_with_states(batch_id)
    external_ids = [external_id for external_id, _ in tracked]
    made = {external_id for external_id, state in tracked if state in MADE_STATES}
    slots = asyncio.Semaphore(concurrency)

    async def lookup(external_id: str) -> tuple[str, Payout | None]:
        async with slots:
            return external_id, await client.find_payout_by_external_id(external_id)

    found = await asyncio.gather(*(lookup(ext) for ext in external_ids))
    moved = not_found = 0
    unconfirmed: list[str] = []
    for external_id, payout in found:
        if payout is None:
            not_found += 1
            if external_id in made:
                # Never silence: the ledger says it was made, the service does not know it.
                unconfirmed.append(external_id)
            continue
        moved += store.record_status(external_id, payout.id, payout.status, payout.status_message)
    return RefreshResult(len(external_ids), moved, not_found, tuple(sorted(unconfirmed)))


MADE_STATES = frozenset(
    {RowState.CREATED.value, RowState.PROCESSING.value, RowState.COMPLETED.value}
)
