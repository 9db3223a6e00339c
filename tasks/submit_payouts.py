"""Submitting a batch: the balance check before the first payout, then one task per chunk."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from decimal import Decimal

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.paying import BalanceCheck, ChunkResult, check_balance, submit_chunk
from payflow.settings import Settings
from tasks.connections import RunTarget, open_client, open_ledger, worker_is_dead


@task(name="check-balance", cache_policy=NO_CACHE)
def check_merchant_balance(target: RunTarget, totals: Mapping[str, Decimal]) -> BalanceCheck:
    """Compare what the batch still has to pay with the merchant balance, per currency."""

    async def run() -> BalanceCheck:
        async with open_client(target) as client:
            return await check_balance(client, totals)

    return asyncio.run(run())


@task(name="release-dead-leases", cache_policy=NO_CACHE)
def release_dead_leases(target: RunTarget, batch_id: str) -> int:
    """Hand back the leases of this host's workers that no longer run (a killed earlier run)."""
    ledger = open_ledger(target.ledger_url)
    return sum(
        ledger.release_stale_leases(batch_id, holder)
        for holder in ledger.lease_holders(batch_id)
        if worker_is_dead(holder)
    )


@task(name="submit-chunk", cache_policy=NO_CACHE)
def submit_payout_chunk(
    target: RunTarget, batch_id: str, worker_id: str, lanes: int = 1
) -> ChunkResult:
    """Claim up to a chunk of rows and pay each exactly once (invariant 1).

    With `lanes` chunk tasks running at once, each gets its share of the requests in flight."""
    settings = Settings()
    ledger = open_ledger(target.ledger_url)

    async def run() -> ChunkResult:
        async with open_client(target, settings, lanes=lanes) as client:
            return await submit_chunk(
                client,
                ledger,
                batch_id,
                worker_id=worker_id,
                chunk_size=settings.chunk_size,
                callback_url=target.callback_url,
            )

    return asyncio.run(run())


def totals_to_pay(ledger_url: str, batch_id: str) -> dict[str, Decimal]:
    """Sum per currency of the batch's rows not yet sent (VALIDATED or SUBMITTING)."""
    ledger = open_ledger(ledger_url)
    totals: dict[str, Decimal] = {}
    for row in ledger.batch_rows(batch_id):
        if row.state in ("VALIDATED", "SUBMITTING") and row.amount is not None and row.currency:
            totals[row.currency] = totals.get(row.currency, Decimal(0)) + row.amount
    return totals
