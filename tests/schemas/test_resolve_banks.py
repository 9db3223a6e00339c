"""Fetching banks and services from the sandbox over real HTTP, and the bound on concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from support.stats import sandbox_stats

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import AuthError, RejectedError
from payflow.api.models import Bank, PayoutService
from payflow.intake.lookups import (
    BankInfo,
    fetch_banks,
    fetch_lookups,
    fetch_services,
    prefetched,
)
from payflow.intake.reading import batch_from_rows
from payflow.sandbox import SandboxServer
from payflow.schemas.lookups import sbp_phones
from payflow.schemas.validation import validate_rows


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


async def test_one_fetch_gives_services_and_the_banks_of_each_sbp_phone(
    sandbox: SandboxServer,
) -> None:
    raw = batch_from_rows(
        [
            ["amount", "currency", "paymentType", "requisites", "name", "userId"],
            ["10", "RUB", "SBP", "79161234567", "A", "u1"],
            ["15", "XOF", "SIM", "2250700001234", "B", "u2"],
        ]
    )
    async with AsyncPayoutsClient(SecretStr(sandbox.token), base_url=sandbox.url) as client:
        lookups = await fetch_lookups(client, sbp_phones(raw), concurrency=2)
    assert any(s.payment_type == "SBP" for s in lookups.services)
    assert set(lookups.banks) == {"79161234567"} and lookups.banks["79161234567"]


async def test_only_phones_that_can_be_looked_up_are_asked_for_their_banks(
    sandbox: SandboxServer,
) -> None:
    # A malformed phone's banks list was fetched, then never read: validation rejects the phone
    # and looks none of its banks up. The sandbox counts every GET /v1/payouts/banks.
    header = ["externalId", "amount", "currency", "paymentType", "requisites", "bankName"]
    malformed = ["+7 916 555-01-02", "7916555", "79165550103 ", "89165550104x"]
    rows = [
        ["ok-1", "10", "RUB", "SBP", "79165550101", "Сбербанк"],
        ["ok-2", "10", "USD", "SBP", "89165550105", "Сбербанк"],  # its currency is the problem
        *([f"bad-{n}", "10", "RUB", "SBP", phone, "Сбербанк"] for n, phone in enumerate(malformed)),
        ["sim", "10", "XOF", "SIM", "2250700001234", ""],
    ]
    raw = batch_from_rows([[*header, "name", "userId"], *([*r, "A", r[0]] for r in rows)])
    before = sandbox_stats(sandbox)["bankLookupsByPhone"]
    async with AsyncPayoutsClient(SecretStr(sandbox.token), base_url=sandbox.url) as client:
        lookups = await fetch_lookups(client, sbp_phones(raw), concurrency=2)
    after = sandbox_stats(sandbox)["bankLookupsByPhone"]
    asked = {phone: n - before.get(phone, 0) for phone, n in after.items()}
    assert {phone: n for phone, n in asked.items() if n} == {"79165550101": 1, "89165550105": 1}
    # Validation asks for no phone that was not fetched, and still names every malformed one.
    report = validate_rows(raw, services=None, banks_for_phones=prefetched(lookups.banks))
    phone_rejects = {p.row for p in report.rejects if p.rule == "requisites_ru_mobile_phone"}
    assert phone_rejects == {4, 5, 6, 7}


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


class RefusingClient(CountingClient):
    """Refuses to look up one phone with a 400, and the token itself with a 401 on demand."""

    def __init__(self, refused: str, status: int) -> None:
        super().__init__()
        self.refused = refused
        self.status = status

    async def list_banks(self, phone: str) -> list[Bank]:
        if phone == self.refused:
            error = AuthError if self.status == 401 else RejectedError
            raise error("refused", status_code=self.status)
        return await super().list_banks(phone)


async def test_a_phone_the_service_refuses_has_no_banks_but_a_refused_token_stops() -> None:
    banks = await fetch_banks(RefusingClient("7abc", 400), ["7abc", "79161234567"])
    assert banks["7abc"] == [] and banks["79161234567"]
    with pytest.raises(AuthError):
        await fetch_banks(RefusingClient("7abc", 401), ["7abc", "79161234567"])


def test_the_flow_looks_up_each_sbp_phone_once_before_validating() -> None:
    raw = batch_from_rows(
        [
            ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"],
            ["a", "10", "RUB", "SBP", "79161234567", "A", "u1"],
            ["b", "15", "XOF", "SIM", "2250700001234", "B", "u2"],
            ["c", "20", "RUB", "SBP", "79161234567", "C", "u3"],
            ["d", "25", "RUB", "SBP", "79031112233", "D", "u4"],
        ]
    )
    assert sbp_phones(raw) == ["79161234567", "79031112233"]
    lookup = prefetched({"79161234567": [BankInfo("1", "Bank")]})
    assert lookup(["79161234567"]) == {"79161234567": [BankInfo("1", "Bank")]}
    with pytest.raises(LookupError):
        lookup(["79031112233"])
