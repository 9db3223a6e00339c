"""The service's lists validation needs: SBP banks per phone (each phone once) and services.

One async fetcher serves both the Prefect tasks and the command line; validation itself takes
the lists as plain inputs (`Lookups`), so it runs without HTTP in tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # validation takes these lists as plain inputs and never loads the client
    from payflow.api.models import Bank, PayoutService

SBP = "SBP"
DEFAULT_CONCURRENCY = 8


@dataclass(frozen=True, slots=True)
class BankInfo:
    """One record of GET /v1/payouts/banks: the id sent as bankName and the display name."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ServiceInfo:
    """What validation needs of a payout service; None where the services list does not say."""

    id: int
    payment_type: str | None = None
    currency: str | None = None


BanksForPhones = Callable[[Sequence[str]], Mapping[str, Sequence[BankInfo]]]


@dataclass(frozen=True)
class Lookups:
    """The services list and the banks list of each SBP phone of one batch."""

    services: list[ServiceInfo]
    banks: dict[str, list[BankInfo]] = field(default_factory=dict)


class ListsClient(Protocol):
    """The part of `AsyncPayoutsClient` these lookups use."""

    async def list_banks(self, phone: str) -> list[Bank]: ...

    async def list_services(self) -> list[PayoutService]: ...


async def fetch_banks(
    client: ListsClient, phones: Sequence[str], *, concurrency: int = DEFAULT_CONCURRENCY
) -> dict[str, list[BankInfo]]:
    """The banks list of each distinct phone, with at most `concurrency` requests in flight."""
    from payflow.api.errors import AuthError, RejectedError

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


async def fetch_lookups(
    client: ListsClient, phones: Sequence[str], *, concurrency: int = DEFAULT_CONCURRENCY
) -> Lookups:
    """The services list and the banks of each phone (`payflow.schemas.lookups.sbp_phones` of
    the batch), fetched together."""
    services, banks = await asyncio.gather(
        fetch_services(client), fetch_banks(client, phones, concurrency=concurrency)
    )
    return Lookups(services, banks)


def prefetched(banks: Mapping[str, Sequence[BankInfo]]) -> BanksForPhones:
    """A `banks_for_phones` answering from lists fetched beforehand."""

    def lookup(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
        missing = [phone for phone in phones if phone not in banks]
        if missing:
            raise LookupError(f"{len(missing)} SBP phones were not looked up beforehand")
        return {phone: banks[phone] for phone in phones}

    return lookup
