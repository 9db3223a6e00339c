"""Fetching the lists validation needs, as Prefect tasks (the work: `payflow.intake.lookups`).

Both only read, so Prefect runs them again on a transient error the client's own bounded GET
retries did not outlast (a 5xx, 429, timeout or dropped connection), never on a refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.intake import RawBatch, ValidationReport
from payflow.intake.kept import keep_fetched, validate_with_kept
from payflow.intake.lookups import (
    DEFAULT_CONCURRENCY,
    BankInfo,
    ServiceInfo,
    fetch_banks,
    fetch_services,
    prefetched,
)
from payflow.schemas.lookups import sbp_phones
from payflow.tasks.connections import RunTarget, open_client, open_ledger
from payflow.tasks.retrying import READ_RETRIES, READ_RETRY_DELAYS, transient_only

__all__ = [
    "keep_lookups",
    "load_services",
    "prefetched",
    "resolve_banks",
    "sbp_phones",
    "validate_kept",
]


@task(
    name="resolve-banks",
    cache_policy=NO_CACHE,
    retries=READ_RETRIES,
    retry_delay_seconds=READ_RETRY_DELAYS,
    retry_condition_fn=transient_only,
)
def resolve_banks(
    target: RunTarget, phones: Sequence[str], concurrency: int = DEFAULT_CONCURRENCY
) -> dict[str, list[BankInfo]]:
    """Prefect task: the banks list of each distinct phone (the token comes from Settings)."""

    async def run() -> dict[str, list[BankInfo]]:
        async with open_client(target) as client:
            return await fetch_banks(client, phones, concurrency=concurrency)

    return asyncio.run(run())


@task(
    name="load-services",
    cache_policy=NO_CACHE,
    retries=READ_RETRIES,
    retry_delay_seconds=READ_RETRY_DELAYS,
    retry_condition_fn=transient_only,
)
def load_services(target: RunTarget) -> list[ServiceInfo]:
    """Prefect task: the payout services list, for validation."""

    async def run() -> list[ServiceInfo]:
        async with open_client(target) as client:
            return await fetch_services(client)

    return asyncio.run(run())


@task(name="keep-lookups", cache_policy=NO_CACHE)
def keep_lookups(
    ledger_url: str, services: list[ServiceInfo], banks: dict[str, list[BankInfo]]
) -> None:
    """Prefect task: keep the lists just fetched, for makers' processes without the token."""
    keep_fetched(open_ledger(ledger_url), services, banks)


@task(name="validate-with-kept-lists", cache_policy=NO_CACHE)
def validate_kept(ledger_url: str, raw: RawBatch, strict: bool = False) -> ValidationReport:
    """Prefect task: validate with the lists a paying process kept, for a process without the
    token (`validate_with_kept`)."""
    return validate_with_kept(open_ledger(ledger_url), raw, strict=strict)
