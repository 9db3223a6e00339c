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
from payflow.stopping import STOP

DEFAULT_LEASE_SECONDS = 300.0
DEFAULT_LANES = 2


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


class ChunkLoop:
    """Adds up chunk results and says when a claim-and-submit loop must stop.

    It stops when a claim finds nothing, or when a chunk settles nothing or hands a row back
    twice: the service is failing those rows now, so the next run (or Prefect's retry) tries.
    It also stops when the run was asked to stop (SIGTERM, SIGINT).
    """

    def __init__(self) -> None:
        self.total = SubmitStats()
        self._handed_back: set[str] = set()

    def goes_on_after(self, result: ChunkResult) -> bool:
        """Count `result`; False when the loop should stop."""
        if result.claimed == 0:
            return False
        self.total.merge(result.stats)
        left = set(result.stats.left_for_next_run)
        settled = result.stats.total - len(left)
        again = bool(self._handed_back & left)
        self._handed_back |= left
        return settled > 0 and not again and not STOP.requested()


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
    lanes: int = DEFAULT_LANES,
) -> SubmitStats:
    """Submit every claimable row of the batch; rows handed back are left for the next run.

    `lanes` claim-and-submit loops run side by side and share the client's bound on requests
    in flight, so one lane's tail (its last requests, then its next claim) overlaps the other
    lanes' full flight instead of leaving the bound half used at every chunk boundary. When a
    lane fails, the others stop after their current chunk and the first error is raised.
    """
    if lanes < 1:
        raise ValueError("lanes must be at least 1")
    loops = [ChunkLoop() for _ in range(lanes)]
    failed = asyncio.Event()

    async def lane(loop: ChunkLoop) -> None:
        try:
            while not failed.is_set():
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
                if not loop.goes_on_after(result):
                    return
        except Exception:
            failed.set()
            raise

    # The other lanes are never cancelled when one fails (a refused token): a cancelled lane
    # could leave a claim committing in its thread after the fact. They stop at their next
    # chunk boundary instead, each having settled or released the rows it held.
    outcomes = await asyncio.gather(*(lane(loop) for loop in loops), return_exceptions=True)
    errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    if errors:
        raise errors[0]
    total = SubmitStats()
    for loop in loops:
        total.merge(loop.total)
    return total
