"""Fetching banks and services from the sandbox over real HTTP, and the bound on concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from payflow.api import AsyncPayoutsClient
from payflow.api.models import Bank, PayoutService
from payflow.sandbox import SandboxServer
from tasks.resolve_banks import banks_fetcher, fetch_banks, fetch_services, services_list


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


async def test_banks_per_distinct_phone_from_the_sandbox(sandbox: SandboxServer) -> None:
    async with AsyncPayoutsClient(sandbox.token, base_url=sandbox.url) as client:
        banks = await fetch_banks(client, ["79161234567", "79160000000", "79161234567"])
    assert set(banks) == {"79161234567", "79160000000"}
    assert banks["79160000000"] == []
    assert any(bank.name == "Сбербанк" for bank in banks["79161234567"])


async def test_services_from_the_sandbox(sandbox: SandboxServer) -> None:
    async with AsyncPayoutsClient(sandbox.token, base_url=sandbox.url) as client:
        services = await fetch_services(client)
    assert any(s.payment_type == "SIM" and s.currency == "XOF" for s in services)


def test_sync_fetchers_for_validate_rows(sandbox: SandboxServer) -> None:
    token = SecretStr(sandbox.token)
    assert services_list(sandbox.url, token)
    banks = banks_fetcher(sandbox.url, token, concurrency=2)(["79161234567"])
    assert banks["79161234567"]


class CountingClient:
    """Answers after a short pause and records the most requests it saw at once."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0
        self.asked: list[str] = []

    async def list_banks(self, phone: str) -> list[Bank]:
        self.asked.append(phone)
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        return [Bank(id="1", name="Bank")]

    async def list_services(self) -> list[PayoutService]:
        return []


async def test_concurrency_is_bounded_and_each_phone_asked_once() -> None:
    client = CountingClient()
    phones = [f"7916000{n:04d}" for n in range(20)] * 2
    banks = await fetch_banks(client, phones, concurrency=3)
    assert len(banks) == 20
    assert sorted(client.asked) == sorted(set(phones))
    assert client.most == 3
