"""Submitting a batch: the balance check before the first payout, then one task per chunk."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.connections import RunTarget, open_ledger, with_client
from payflow.paying import BalanceCheck, ChunkResult, check_balance, submit_chunk
from payflow.paying.knobs import PayKnobs
from payflow.paying.precheck import Prechecked, check_marked_rows
from payflow.paying.workers import release_dead_leases as release_leases_of_dead_workers
from payflow.tasks.retrying import READ_RETRIES, READ_RETRY_DELAYS, transient_only


@task(
    name="check-balance",
    cache_policy=NO_CACHE,
    retries=READ_RETRIES,
    retry_delay_seconds=READ_RETRY_DELAYS,
    retry_condition_fn=transient_only,
)
def check_merchant_balance(target: RunTarget, totals: Mapping[str, Decimal]) -> BalanceCheck:
    """Compare what the batch still has to pay with the merchant balance, per currency."""
    return with_client(target, lambda client: check_balance(client, totals))


@task(
    name="check-marked-rows",
    cache_policy=NO_CACHE,
    retries=READ_RETRIES,
    retry_delay_seconds=READ_RETRY_DELAYS,
    retry_condition_fn=transient_only,
)
def check_unchecked_rows(target: RunTarget, batch_id: str) -> Prechecked:
    """Check the rows a maker's process registered without their bank or service checked
    (it held no API token), before any is sent: unmarked, or refused unsent."""
    ledger = open_ledger(target.ledger_url)
    return with_client(target, lambda client: check_marked_rows(client, ledger, batch_id))


@task(name="release-dead-leases", cache_policy=NO_CACHE)
def release_dead_leases(target: RunTarget, batch_id: str) -> int:
    """Hand back the leases of this host's workers that no longer run (a killed earlier run)."""
    return release_leases_of_dead_workers(open_ledger(target.ledger_url), batch_id)


@task(name="submit-chunk", cache_policy=NO_CACHE)
def submit_payout_chunk(
    target: RunTarget, batch_id: str, worker_id: str, knobs: PayKnobs
) -> ChunkResult:
    """Claim up to a chunk of rows and pay each exactly once (invariant 1); each of the
    `knobs.lanes` chunk tasks running at once gets its share of the requests in flight."""
    ledger = open_ledger(target.ledger_url)
    return with_client(
        target,
        lambda client: submit_chunk(
            client,
            ledger,
            batch_id,
            worker_id=worker_id,
            chunk_size=knobs.chunk_size,
            callback_url=target.callback_url,
        ),
        lanes=knobs.lanes,
        max_in_flight=knobs.max_in_flight,
    )
