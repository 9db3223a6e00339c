"""A batch's figures, read from the ledger: what intake registered, what paying left."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.approvals import UnknownBatch
from payflow.connections import open_ledger
from payflow.ledger import BatchCounts

__all__ = ["UnknownBatch", "count_batch", "count_latest_attempts", "count_not_rechecked"]


@task(name="count-batch", cache_policy=NO_CACHE)
def count_batch(ledger_url: str, batch_id: str) -> BatchCounts:
    """Rows per state, totals still to pay and the content hash, read now."""
    ledger = open_ledger(ledger_url)
    if not ledger.batch_exists(batch_id):
        raise UnknownBatch(f"no batch {batch_id!r} in the ledger")
    return ledger.batch_counts(batch_id)


@task(name="count-latest-attempts", cache_policy=NO_CACHE)
def count_latest_attempts(ledger_url: str, batch_id: str) -> dict[str, int]:
    """Rows per state of each row's latest attempt (a rerun's, where one was sent), read now."""
    return open_ledger(ledger_url).latest_summary(batch_id)


@task(name="count-not-rechecked", cache_policy=NO_CACHE)
def count_not_rechecked(ledger_url: str, batch_id: str) -> int:
    """The batch's sent payouts no reconciliation re-fetched since their last news, read now."""
    return open_ledger(ledger_url).not_rechecked(batch_id)
