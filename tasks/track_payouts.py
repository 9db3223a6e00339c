"""Following a batch's payouts to final statuses: webhooks record, polling fills the gaps."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from uuid import UUID

from prefect import task
from prefect.artifacts import update_progress_artifact
from prefect.cache_policies import NO_CACHE

from payflow.paying import Correction, TrackResult, reconcile_finals, track_batch
from payflow.settings import Settings
from tasks.connections import RunTarget, open_client, open_ledger

FINAL = ("COMPLETED", "FAILED", "CANCELED", "EXPIRED", "REJECTED", "CONFLICT", "SUBMIT_REJECTED")


def percent_final(counts: Mapping[str, int]) -> float:
    """Share of the batch's rows that need nothing more, in percent."""
    total = sum(counts.values())
    done = sum(counts.get(state, 0) for state in FINAL)
    return 100.0 * done / total if total else 100.0


@task(name="track-payouts", cache_policy=NO_CACHE)
def track_payouts(
    target: RunTarget, batch_id: str, progress_artifact_id: str | None = None
) -> TrackResult:
    """Poll payouts without news until all are final or the configured deadline passes."""
    settings = Settings()
    ledger = open_ledger(target.ledger_url)

    shown = -1.0

    def on_progress(counts: Mapping[str, int]) -> None:
        nonlocal shown
        percent = round(percent_final(counts), 1)
        if progress_artifact_id is not None and percent != shown:
            shown = percent
            # Called inside the task's event loop: force the synchronous variant.
            update_progress_artifact(UUID(progress_artifact_id), percent, _sync=True)  # type: ignore[call-arg]

    async def run() -> TrackResult:
        async with open_client(target, settings) as client:
            return await track_batch(
                client,
                ledger,
                batch_id,
                deadline=settings.track_deadline,
                poll_interval=settings.poll_interval,
                poll_max_interval=settings.poll_max_interval,
                on_progress=on_progress,
            )

    return asyncio.run(run())


@task(name="reconcile-finals", cache_policy=NO_CACHE)
def find_corrections(target: RunTarget, batch_id: str) -> list[Correction]:
    """Fetch COMPLETED payouts again: the platform may have corrected one with no webhook."""
    ledger = open_ledger(target.ledger_url)

    async def run() -> list[Correction]:
        async with open_client(target) as client:
            return await reconcile_finals(client, ledger, batch_id)

    return asyncio.run(run())
