"""Following a batch's payouts to final statuses: webhooks record, polling fills the gaps."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.connections import RunTarget, open_ledger, with_client
from payflow.paying import TrackResult, track_batch
from payflow.paying.knobs import PayKnobs
from payflow.tasks.retrying import READ_RETRIES, READ_RETRY_DELAYS, transient_only


@task(
    name="track-payouts",
    cache_policy=NO_CACHE,
    retries=READ_RETRIES,
    retry_delay_seconds=READ_RETRY_DELAYS,
    retry_condition_fn=transient_only,
)
def track_payouts(
    target: RunTarget,
    batch_id: str,
    knobs: PayKnobs,
    on_progress: Callable[[Mapping[str, int]], None] | None = None,
) -> TrackResult:
    """Poll payouts without news until all are final or the deadline passes."""
    ledger = open_ledger(target.ledger_url)
    return with_client(
        target,
        lambda client: track_batch(
            client,
            ledger,
            batch_id,
            deadline=knobs.track_deadline,
            poll_interval=knobs.poll_interval,
            poll_max_interval=knobs.poll_max_interval,
            quiet_period=knobs.quiet_period,
            on_progress=on_progress,
        ),
    )
