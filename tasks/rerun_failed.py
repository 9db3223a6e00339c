"""Tasks of the rerun-failed flow: glue over `payflow.rerun`; paying is `pay_batch`'s."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.acts.actor import Actor
from payflow.acts.rerun import rerun
from payflow.intake import RawBatch, ValidationReport
from payflow.ledger import AttemptsOutcome, NewAttempt, ServiceView, WordSource
from payflow.rerun import (
    Candidate,
    Candidates,
    Dropped,
    classifier,
    find_candidates,
    plan_attempts,
    read_corrections,
    refetch_parents,
)
from payflow.rerun.checking import validate_with_lookups
from payflow.settings import Settings
from payflow.tasks.connections import RunTarget, open_client, open_ledger


@task(name="find-rerun-candidates", cache_policy=NO_CACHE)
def find_rerun_candidates(ledger_url: str, batch_id: str) -> Candidates:
    """Every row of the batch by its latest attempt: eligible for a rerun or not, and why."""
    return find_candidates(
        open_ledger(ledger_url), batch_id, classifier(Settings().failure_classes_path)
    )


@task(name="refetch-parents", cache_policy=NO_CACHE)
def refetch_rerun_parents(
    target: RunTarget, chosen: list[Candidate], batch_id: str
) -> tuple[list[Candidate], list[Dropped]]:
    """Ask the service again about each parent; drop those no longer failed for good. What it
    said is kept in the ledger as each payout's latest word."""
    ledger = open_ledger(target.ledger_url)

    def heard(views: Sequence[ServiceView]) -> None:
        ledger.save_service_views(batch_id, views, WordSource.RERUN)

    async def run() -> tuple[list[Candidate], list[Dropped]]:
        async with open_client(target) as client:
            return await refetch_parents(client, chosen, heard, sandbox=target.sandbox)

    return asyncio.run(run())


class ValidationRunner:
    """`validate_rows` with the target's services and banks lists: a batch file's own rules."""

    def __init__(self, target: RunTarget, settings: Settings) -> None:
        self._target = target
        self._settings = settings

    def __call__(self, raw: RawBatch) -> ValidationReport:
        async def fetch() -> ValidationReport:
            async with open_client(self._target, self._settings) as client:
                return await validate_with_lookups(client, raw)

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
    ledger_url: str,
    batch_id: str,
    attempts: list[NewAttempt],
    maker: Actor | None,
    claimed: str | None,
) -> AttemptsOutcome:
    """Register the attempts as a rerun batch, submitted as `maker`'s (the act,
    `payflow.acts.rerun`); a root already rerun gets nothing new."""
    return rerun(open_ledger(ledger_url), batch_id, attempts, maker, claimed=claimed)


@task(name="rerun-batches-to-pay", cache_policy=NO_CACHE)
def rerun_batches_to_pay(ledger_url: str, batch_id: str) -> list[str]:
    """The batch's rerun batches that still have rows to send, oldest first."""
    ledger = open_ledger(ledger_url)
    return [
        rerun_id
        for rerun_id in ledger.rerun_batches(batch_id)
        if ledger.batch_counts(rerun_id).to_send
    ]
