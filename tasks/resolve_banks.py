"""Fetching the lists validation needs: SBP banks per phone (once each, bounded) and services."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Protocol

from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import SecretStr

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import AuthError, RejectedError
from payflow.api.models import Bank, PayoutService
from payflow.intake import RawBatch
from schemas.lookups import SBP, BankInfo, BanksForPhones, ServiceInfo
from tasks.connections import RunTarget, open_client

DEFAULT_CONCURRENCY = 8


class ListsClient(Protocol):
    """The part of `AsyncPayoutsClient` these lookups use."""

    async def list_banks(self, phone: str) -> list[Bank]: ...

    async def list_services(self) -> list[PayoutService]: ...


async def fetch_banks(
    client: ListsClient, phones: Sequence[str], *, concurrency: int = DEFAULT_CONCURRENCY
) -> dict[str, list[BankInfo]]:
    """The banks list of each distinct phone, with at most `concurrency` requests in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def one(phone: str) -> tuple[str, list[BankInfo]]:
        async with gate:
            try:
                banks = await client.list_banks(phone)
            except AuthError:
                raise
            except RejectedError:
                # 404, or a phone the service will not look up (4xx): no bank list, so the
                # row is rejected with its own message; the rest of the batch goes on.
                banks = []
        return phone, [BankInfo(b.id, b.name or "") for b in banks]

    results = await asyncio.gather(*(one(phone) for phone in dict.fromkeys(phones)))
    return dict(results)


async def fetch_services(client: ListsClient) -> list[ServiceInfo]:
    """The payout services list, reduced to what validation checks."""
    services = []
    for service in await client.list_services():
        if service.id is None or not str(service.id).isdigit():
            continue  # a record without a usable id cannot match any serviceId cell
        services.append(ServiceInfo(int(service.id), service.payment_type, service.currency))
    return services


def banks_fetcher(
    base_url: str,
    token: SecretStr,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = 30.0,
) -> BanksForPhones:
    """A `banks_for_phones` for `validate_rows` that asks the API (one event loop per call)."""

    def fetch(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
        async def run() -> dict[str, list[BankInfo]]:
            async with AsyncPayoutsClient(token, base_url=base_url, timeout=timeout) as client:
                return await fetch_banks(client, phones, concurrency=concurrency)

        return asyncio.run(run())

    return fetch


def services_list(base_url: str, token: SecretStr, *, timeout: float = 30.0) -> list[ServiceInfo]:
    """The services list from the API, for `validate_rows`."""

    async def run() -> list[ServiceInfo]:
        async with AsyncPayoutsClient(token, base_url=base_url, timeout=timeout) as client:
            return await fetch_services(client)

    return asyncio.run(run())


def sbp_phones(raw: RawBatch) -> list[str]:
    """The distinct recipient phones of the batch's SBP rows, in file order."""
    frame = raw.frame
    if "paymentType" not in frame or "requisites" not in frame:
        return []
    phones = frame.loc[frame["paymentType"] == SBP, "requisites"]
    return list(dict.fromkeys(str(phone) for phone in phones.tolist() if phone))


def prefetched(banks: Mapping[str, Sequence[BankInfo]]) -> BanksForPhones:
    """A `banks_for_phones` answering from lists fetched beforehand by `resolve_banks`."""

    def lookup(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
        missing = [phone for phone in phones if phone not in banks]
        if missing:
            raise LookupError(f"{len(missing)} SBP phones were not looked up beforehand")
        return {phone: banks[phone] for phone in phones}

    return lookup


@task(name="resolve-banks", cache_policy=NO_CACHE)
def resolve_banks(
    target: RunTarget, phones: Sequence[str], concurrency: int = DEFAULT_CONCURRENCY
) -> dict[str, list[BankInfo]]:
    """Prefect task: the banks list of each distinct phone (the token comes from Settings)."""

    async def run() -> dict[str, list[BankInfo]]:
        async with open_client(target) as client:
            return await fetch_banks(client, phones, concurrency=concurrency)

    return asyncio.run(run())


@task(name="load-services", cache_policy=NO_CACHE)
def load_services(target: RunTarget) -> list[ServiceInfo]:
    """Prefect task: the payout services list, for validation."""

    async def run() -> list[ServiceInfo]:
        async with open_client(target) as client:
            return await fetch_services(client)

    return asyncio.run(run())
