"""Tasks of the rerun-failed flow: glue over `payflow.rerun`, `payflow.approvals` and paying."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.approvals import ApprovalStatus, approval_status, load_policy
from payflow.intake import RawBatch, ValidationReport
from payflow.intake.lookups import fetch_lookups, prefetched
from payflow.ledger import AttemptsOutcome, NewAttempt, RowState
from payflow.paying import TrackResult, check_balance, submit_batch, track_batch
from payflow.rerun import (
    Candidate,
    Candidates,
    Dropped,
    classify,
    find_candidates,
    plan_attempts,
    read_corrections,
    refetch_parents,
    register_rerun,
)
from payflow.schemas.validation import validate_rows
from payflow.settings import Settings
from payflow.tasks.connections import RunTarget, new_worker_id, open_client, open_ledger

UNPAID = (RowState.VALIDATED, RowState.SUBMITTING)


@task(name="find-rerun-candidates", cache_policy=NO_CACHE)
def find_rerun_candidates(ledger_url: str, batch_id: str) -> Candidates:
    """Every row of the batch by its latest attempt: eligible for a rerun or not, and why."""
    return find_candidates(open_ledger(ledger_url), batch_id, classify)


@task(name="refetch-parents", cache_policy=NO_CACHE)
def refetch_rerun_parents(
    target: RunTarget, chosen: list[Candidate]
) -> tuple[list[Candidate], list[Dropped]]:
    """Ask the service again about each parent; drop those no longer failed for good."""

    async def run() -> tuple[list[Candidate], list[Dropped]]:
        async with open_client(target) as client:
            return await refetch_parents(client, chosen)

    return asyncio.run(run())


class ValidationRunner:
    """`validate_rows` with the target's services and banks lists: a batch file's own rules."""

    def __init__(self, target: RunTarget, settings: Settings) -> None:
        self._target = target
        self._settings = settings

    def __call__(self, raw: RawBatch) -> ValidationReport:
        async def fetch() -> ValidationReport:
            async with open_client(self._target, self._settings) as client:
                lookups = await fetch_lookups(client, raw)
            return validate_rows(
                raw, services=lookups.services, banks_for_phones=prefetched(lookups.banks)
            )

        return asyncio.run(fetch())


@task(name="plan-rerun", cache_policy=NO_CACHE)
def plan_rerun(
    target: RunTarget, chosen: list[Candidate], corrections_path: str | None
) -> list[NewAttempt]:
    """The next attempt of each row, with the corrections file applied and validated."""
    settings = Settings()
    corrections = read_corrections(Path(corrections_path)) if corrections_path else {}
    ledger = open_ledger(target.ledger_url)
    return plan_attempts(ledger, chosen, corrections, ValidationRunner(target, settings))


@task(name="register-rerun", cache_policy=NO_CACHE)
def register_rerun_attempts(
    ledger_url: str, batch_id: str, attempts: list[NewAttempt], made_by: str | None
) -> AttemptsOutcome:
    """Register the attempts as a rerun batch; a root already rerun gets nothing new."""
    return register_rerun(open_ledger(ledger_url), batch_id, attempts, made_by)


@task(name="rerun-batches-to-pay", cache_policy=NO_CACHE)
def rerun_batches_to_pay(ledger_url: str, batch_id: str) -> dict[str, ApprovalStatus]:
    """The batch's rerun batches that still have unpaid rows, with their approval status."""
    ledger = open_ledger(ledger_url)
    policy = load_policy(Settings().approvals_file)
    return {
        rerun_id: approval_status(ledger, rerun_id, policy)
        for rerun_id in ledger.rerun_batches(batch_id)
        if any(row.state in UNPAID for row in ledger.batch_rows(rerun_id))
    }


@task(name="pay-rerun-batch", cache_policy=NO_CACHE)
def pay_rerun_batch(target: RunTarget, batch_id: str) -> TrackResult:
    """Pay an approved rerun batch with the ordinary submit protocol, then track it."""
    settings = Settings()
    ledger = open_ledger(target.ledger_url)
    totals: dict[str, Decimal] = {}
    for row in ledger.batch_rows(batch_id):
        if row.state in UNPAID and row.amount is not None and row.currency:
            totals[row.currency] = totals.get(row.currency, Decimal(0)) + row.amount

    async def run() -> TrackResult:
        async with open_client(target, settings) as client:
            (await check_balance(client, totals)).raise_if_short()
            await submit_batch(
                client,
                ledger,
                batch_id,
                worker_id=new_worker_id(),
                chunk_size=settings.chunk_size,
                callback_url=target.callback_url,
            )
            return await track_batch(
                client,
                ledger,
                batch_id,
                deadline=settings.track_deadline,
                poll_interval=settings.poll_interval,
                poll_max_interval=settings.poll_max_interval,
            )

    return asyncio.run(run())
