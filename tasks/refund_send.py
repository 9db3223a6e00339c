"""Refund batch tasks that talk to the service: submit exactly once, track, report."""

from __future__ import annotations

import asyncio

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.opening import why_not_written
from payflow.paying import SubmitStats
from payflow.refunds.report import RefundReport, write_refund_report
from payflow.refunds.submit import submit_refunds
from payflow.refunds.track import RefundTrackResult, track_refunds
from payflow.settings import Settings
from payflow.tasks.connections import RunTarget, open_client, open_ledger, worker_is_dead
from payflow.wording import report_not_written


@task(name="submit-refunds", cache_policy=NO_CACHE)
def submit_refund_batch(target: RunTarget, batch_id: str, worker_id: str) -> SubmitStats:
    """Release a dead run's leases, then send every refund of the batch exactly once."""
    ledger = open_ledger(target.ledger_url)
    for holder in ledger.refunds.lease_holders(batch_id):
        if worker_is_dead(holder):
            ledger.refunds.release_stale_leases(batch_id, holder)

    async def run() -> SubmitStats:
        async with open_client(target) as client:
            return await submit_refunds(
                client, ledger, batch_id, worker_id=worker_id, callback_url=target.callback_url
            )

    return asyncio.run(run())


@task(name="track-refunds", cache_policy=NO_CACHE)
def track_refund_batch(target: RunTarget, batch_id: str) -> RefundTrackResult:
    """Follow the batch's refunds (webhooks first, polling after) until final or the deadline."""
    deadline = float(Settings().track_deadline)

    async def run() -> RefundTrackResult:
        async with open_client(target) as client:
            return await track_refunds(
                client, open_ledger(target.ledger_url), batch_id, deadline=deadline
            )

    return asyncio.run(run())


@task(name="write-refund-report", cache_policy=NO_CACHE)
def write_refund_batch_report(
    target: RunTarget, batch_id: str, out_dir: str, sandbox: bool, command: str
) -> RefundReport:
    """Write the refund reconciliation report from the ledger. A full disk leaves no file and
    says why in one line with `command`, which writes it later: refunds may have moved."""
    rows = open_ledger(target.ledger_url).refunds.rows(batch_id)
    try:
        return RefundReport(write_refund_report(out_dir, batch_id, rows, sandbox=sandbox))
    except OSError as exc:
        return RefundReport(None, report_not_written(out_dir, why_not_written(exc), command))
