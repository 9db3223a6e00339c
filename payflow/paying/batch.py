"""Claim and submit a batch chunk by chunk: one chunk is one Prefect task in the flow.

Each claim first takes over SUBMITTING rows whose lease expired (a crashed run's), so they are
resolved by lookup before anything new is sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.paying.outcomes import SubmitStats
from payflow.paying.submit import DEFAULT_MAX_ATTEMPTS, submit_claimed

DEFAULT_LEASE_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """One claim-and-submit round: how many rows it claimed and what became of them."""

    claimed: int
    stats: SubmitStats


async def submit_chunk(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    *,
    worker_id: str,
    chunk_size: int,
    callback_url: str | None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
) -> ChunkResult:
    """Claim up to `chunk_size` rows for `worker_id` and run the protocol on them."""
    claimed = await asyncio.to_thread(
        ledger.claim_for_submit,
        batch_id,
        worker_id=worker_id,
        limit=chunk_size,
        lease_seconds=lease_seconds,
    )
    stats = await submit_claimed(
        client,
        ledger,
        claimed,
        callback_url=callback_url,
        worker_id=worker_id,
        max_attempts=max_attempts,
    )
    return ChunkResult(len(claimed), stats)


async def submit_batch(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    *,
    worker_id: str,
    chunk_size: int,
    callback_url: str | None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
) -> SubmitStats:
    """Submit every claimable row of the batch; rows handed back are left for the next run."""
    total = SubmitStats()
    handed_back: set[str] = set()
    while True:
        result = await submit_chunk(
            client,
            ledger,
            batch_id,
            worker_id=worker_id,
            chunk_size=chunk_size,
            callback_url=callback_url,
            max_attempts=max_attempts,
            lease_seconds=lease_seconds,
        )
        if result.claimed == 0:
            return total
        total.merge(result.stats)
        settled = result.stats.total - len(result.stats.left_for_next_run)
        again = handed_back.intersection(result.stats.left_for_next_run)
        handed_back.update(result.stats.left_for_next_run)
        # A chunk that settled nothing, or handed back a row twice, means the service is failing
        # those rows now: stop and let the next run (or Prefect's retry) try again.
        if settled == 0 or again:
            return total
