"""Every documented payout rule answers 400 with a message, and creates nothing."""

from __future__ import annotations

import httpx
import pytest
from sandbox_support import payout_body
from support.stats import sandbox_stats

from payflow.sandbox import SandboxServer
from payflow.sandbox.catalogue import default_service


@pytest.fixture(scope="module")
def shared():
    """One sandbox for the whole module: these tests only add payouts, never depend on absence."""
    with SandboxServer() as server:
        yield server


@pytest.fixture
def api(shared):
    with httpx.Client(base_url=shared.url, headers={"X-Api-Token": shared.token}) as client:
        yield client


def _without_account_field(field: str) -> dict:
    body = payout_body()
    del body["account"][field]
    return body


def _sbp(phone: str = "79161234567", bank: str | None = "100000000111", **changes) -> dict:
    account = {"name": "Иван Петров", "requisites": phone, "userId": "u-2"}
    if bank is not None:
        account["bankName"] = bank
    return payout_body(**{"currency": "RUB", "paymentType": "SBP", "account": account, **changes})


BAD_REQUESTS = {
    "amount missing": ({k: v for k, v in payout_body().items() if k != "amount"}, "amount"),
    "amount zero": (payout_body(amount=0), "positive"),
    "amount negative": (payout_body(amount="-5"), "positive"),
    "amount not a number": (payout_body(amount="ten"), "amount"),
    "amount boolean": (payout_body(amount=True), "amount"),
    "three decimals": (_sbp(amount="10.123"), "2 digits"),
    "XOF not multiple of 5": (payout_body(amount=101), "multiples of 5"),
    "XOF not whole": (payout_body(amount="100.50"), "whole"),
    "KES not whole": (payout_body(currency="KES", amount="10.5"), "whole"),
    "currency missing": ({k: v for k, v in payout_body().items() if k != "currency"}, "currency"),
    "SIM in RUB": (payout_body(currency="RUB"), "not allowed for SIM"),
    "SBP in XOF": (_sbp(currency="XOF"), "not allowed for SBP"),
    "unknown paymentType": (payout_body(paymentType="CARD"), "paymentType"),
    "account missing": ({k: v for k, v in payout_body().items() if k != "account"}, "account"),
    "account.name missing": (_without_account_field("name"), "account.name"),
    "account.requisites missing": (_without_account_field("requisites"), "account.requisites"),
    "account.userId missing": (_without_account_field("userId"), "account.userId"),
    "SIM requisites with plus": (
        payout_body(account={"name": "A", "requisites": "+2250700001", "userId": "u"}),
        "digits only",
    ),
    "SBP without bankName": (_sbp(bank=None), "bankName"),
    "SBP unknown bank": (_sbp(bank="999"), "banks list"),
    "SBP phone without banks": (_sbp(phone="79160000000"), "banks list"),
    "BANK_ACCOUNT short number": (
        payout_body(
            currency="RUB",
            paymentType="BANK_ACCOUNT",
            account={"name": "A", "requisites": "4081781", "userId": "u"},
        ),
        "20-digit",
    ),
    "serviceId unknown": (payout_body(serviceId=999), "serviceId"),
    "serviceId of another type": (payout_body(serviceId=101), "serves SBP RUB"),
    "serviceId not integer": (payout_body(serviceId="201"), "integer"),
    "externalId too long": (payout_body(externalId="x" * 256), "255"),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_broken_rule_is_400_with_message_and_creates_nothing(api, shared, case):
    body, fragment = BAD_REQUESTS[case]
    payouts_before = len(sandbox_stats(shared)["payouts"])

    response = api.post("/v1/payouts", json=body)

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert fragment in error["message"]
    assert len(sandbox_stats(shared)["payouts"]) == payouts_before


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'{"amount": NaN}'])
def test_unreadable_body_is_400(api, raw):
    response = api.post("/v1/payouts", content=raw, headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_amount_as_json_number_is_read_as_decimal_not_float(api):
    # 0.1 + 0.2 style artefacts would show if the sandbox parsed floats
    raw = b'{"amount": 1234567.89, "currency": "RUB", "paymentType": "BANK_ACCOUNT",'
    raw += b'"account": {"name": "A", "requisites": "40817810099910004312", "userId": "u"}}'

    response = api.post("/v1/payouts", content=raw, headers={"Content-Type": "application/json"})

    assert response.status_code == 201, response.text
    assert response.json()["amount"] == "1234567.89"


@pytest.mark.parametrize(
    "body",
    [
        _sbp(),
        _sbp(serviceId=101, amount="10.5"),
        payout_body(currency="GHS", amount=7, serviceId=default_service("SIM", "GHS").id),
        payout_body(currency="NGN", amount="10.25"),
        payout_body(
            currency="USD",
            paymentType="EMAIL",
            account={"name": "A", "requisites": "a@example.org", "userId": "u"},
        ),
    ],
    ids=["sbp", "sbp-with-service", "ghs-service", "ngn-decimals", "email-usd"],
)
def test_valid_requests_of_each_destination_are_accepted(api, body):
    response = api.post("/v1/payouts", json=body)

    assert response.status_code == 201, response.text
