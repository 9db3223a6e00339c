"""Payouts over real HTTP: creation, the state machine, outcomes, balances, lookups, auth."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from sandbox_support import FINAL, balance_of, payout_body, wait_for
from support.stats import sandbox_stats
from support.waiting import sandbox_is_idle, wait_until

from payflow.sandbox.payouts import CORRECTION_MESSAGE


def test_create_returns_created_payout_as_the_spec_shows(api, sandbox):
    body = payout_body(externalId="ext-shape", callbackUrl="http://127.0.0.1:9/cb")

    response = api.post("/v1/payouts", json=body)

    assert response.status_code == 201
    payout = response.json()
    assert payout["status"] == "CREATED"
    assert payout["merchantId"] == sandbox.merchant_id
    assert payout["amount"] == "100.00"
    assert payout["account"] == body["account"]
    assert payout["type"] == "SIM"
    assert payout["requisites"] == {}
    assert payout["statusMessage"] is None and payout["metadata"] is None
    assert payout["callbackUrl"] == "http://127.0.0.1:9/cb"
    assert payout["completedAt"] is None
    assert payout["createdAt"].endswith("Z") and payout["createdAt"] == payout["updatedAt"]


def test_status_moves_created_processing_completed(api):
    payout = api.post("/v1/payouts", json=payout_body("0001")).json()
    seen = {payout["status"]}
    path = f"/v1/payouts/{payout['id']}"

    final = wait_for(api, path, lambda p: seen.add(p["status"]) or p["status"] in FINAL)

    assert final["status"] == "COMPLETED"
    assert final["completedAt"] is not None
    assert seen >= {"CREATED", "PROCESSING", "COMPLETED"}


@pytest.mark.parametrize(
    ("last4", "status", "message"),
    [
        ("1111", "FAILED", "Recipient account is blocked"),
        ("2222", "FAILED", "Recipient not found"),
        ("3333", "CANCELED", None),
        ("4444", "EXPIRED", None),
        ("9876", "COMPLETED", None),
    ],
)
def test_outcome_is_chosen_by_last_four_characters(api, last4, status, message):
    payout = api.post("/v1/payouts", json=payout_body(last4)).json()

    final = wait_for(api, f"/v1/payouts/{payout['id']}", lambda p: p["status"] in FINAL)

    assert (final["status"], final["statusMessage"]) == (status, message)


def test_5555_stays_processing(api, sandbox):
    payout = api.post("/v1/payouts", json=payout_body("5555")).json()
    wait_for(api, f"/v1/payouts/{payout['id']}", lambda p: p["status"] == "PROCESSING")

    # Nothing is scheduled any more: a payout that were to finish would have a pending move.
    wait_until(lambda: sandbox_is_idle(sandbox_stats(sandbox)), what="the sandbox to go idle")

    assert sandbox_stats(sandbox)["pendingMoves"] == 0
    assert api.get(f"/v1/payouts/{payout['id']}").json()["status"] == "PROCESSING"
    assert balance_of(api, "XOF")["held"] == "100.00"


def test_hold_on_create_then_debit_on_completed(api):
    before = Decimal(balance_of(api, "XOF")["available"])
    payout = api.post("/v1/payouts", json=payout_body("0001", amount=250)).json()

    held = balance_of(api, "XOF")
    assert Decimal(held["available"]) == before - 250
    assert Decimal(held["held"]) == 250

    wait_for(api, f"/v1/payouts/{payout['id']}", lambda p: p["status"] == "COMPLETED")
    after = balance_of(api, "XOF")
    assert Decimal(after["available"]) == before - 250
    assert Decimal(after["held"]) == 0


@pytest.mark.parametrize("last4", ["1111", "3333", "4444"])
def test_failed_canceled_expired_release_the_hold(api, last4):
    before = balance_of(api, "XOF")
    payout = api.post("/v1/payouts", json=payout_body(last4, amount=500)).json()
    assert Decimal(balance_of(api, "XOF")["held"]) == 500

    wait_for(api, f"/v1/payouts/{payout['id']}", lambda p: p["status"] in FINAL)

    assert balance_of(api, "XOF") == before


def test_6666_is_completed_then_corrected_to_failed_and_debit_returned(api):
    before = Decimal(balance_of(api, "XOF")["available"])
    payout = api.post("/v1/payouts", json=payout_body("6666")).json()
    path = f"/v1/payouts/{payout['id']}"

    wait_for(api, path, lambda p: p["status"] == "COMPLETED")
    assert Decimal(balance_of(api, "XOF")["available"]) == before - 100
    corrected = wait_for(api, path, lambda p: p["status"] == "FAILED")

    assert corrected["statusMessage"] == CORRECTION_MESSAGE
    assert Decimal(balance_of(api, "XOF")["available"]) == before


def test_settle_applies_every_pending_payout_move_now_the_correction_too(make_sandbox):
    # A run that ends its embedded sandbox asks it first: the correction due 3 s after the
    # 6666 payout completed was dropped with the sandbox, and the row read COMPLETED for good.
    sandbox = make_sandbox(processing_delay=60, final_delay=60, correction_delay=60)
    with httpx.Client(
        base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}, timeout=5
    ) as api:
        before = Decimal(balance_of(api, "XOF")["available"])
        corrected = api.post("/v1/payouts", json=payout_body("6666")).json()
        stuck = api.post("/v1/payouts", json=payout_body("5555", externalId="settle-stuck")).json()

        # 6666: to PROCESSING, to COMPLETED, corrected to FAILED; 5555: to PROCESSING, no more.
        assert api.post("/_sandbox/settle").json() == {"applied": 4}

        now = api.get(f"/v1/payouts/{corrected['id']}").json()
        assert (now["status"], now["statusMessage"]) == ("FAILED", CORRECTION_MESSAGE)
        assert api.get(f"/v1/payouts/{stuck['id']}").json()["status"] == "PROCESSING"
        assert Decimal(balance_of(api, "XOF")["available"]) == before - 100  # the stuck hold
        assert sandbox_stats(sandbox)["pendingMoves"] == 0
        assert api.post("/_sandbox/settle").json() == {"applied": 0}


def test_reused_external_id_is_refused_and_creates_nothing(api, sandbox):
    first = api.post("/v1/payouts", json=payout_body(externalId="dup-1"))
    held_after_first = balance_of(api, "XOF")["held"]

    second = api.post("/v1/payouts", json=payout_body("0002", externalId="dup-1", amount=5))

    assert first.status_code == 201
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "DUPLICATE_EXTERNAL_ID"
    assert balance_of(api, "XOF")["held"] == held_after_first
    seen = sandbox_stats(sandbox)
    assert seen["payoutsByExternalId"] == {"dup-1": 1}
    assert seen["createAttempts"] == {"dup-1": 2}
    assert len(seen["payouts"]) == 1


def test_insufficient_balance_is_409_and_creates_nothing(make_sandbox):
    sandbox = make_sandbox(balances={"XOF": Decimal(100)})
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}) as api:
        refused = api.post("/v1/payouts", json=payout_body(amount=105, externalId="big"))
        accepted = api.post("/v1/payouts", json=payout_body(amount=100))

        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "INSUFFICIENT_BALANCE"
        assert accepted.status_code == 201
        assert sandbox_stats(sandbox)["payoutsByExternalId"] == {}


def test_lookups_by_id_and_external_id(api):
    payout = api.post("/v1/payouts", json=payout_body(externalId="look/up 1")).json()

    assert api.get(f"/v1/payouts/{payout['id']}").json()["id"] == payout["id"]
    assert api.get("/v1/payouts/external/look%2Fup%201").json()["id"] == payout["id"]
    for path in (
        "/v1/payouts/external/unknown",
        "/v1/payouts/00000000-0000-0000-0000-000000000000",
    ):
        missing = api.get(path)
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "NOT_FOUND"


def test_banks_list_by_phone_and_empty_for_0000(api):
    banks = api.get("/v1/payouts/banks", params={"account": "79161234567"}).json()
    none = api.get("/v1/payouts/banks", params={"account": "79160000000"}).json()

    ids = {bank["id"] for bank in banks}
    assert "100000000111" in ids and len(banks) >= 10
    assert all(bank["name"] for bank in banks)
    assert none == []
    assert api.get("/v1/payouts/banks").status_code == 400


def test_services_cover_every_destination_and_balance_names_the_merchant(api, sandbox):
    services = api.get("/v1/payouts/services").json()
    pairs = {(s["paymentType"], s["currency"]) for s in services}
    mobile = {"XOF", "CDF", "GHS", "KES", "NGN", "ZAR", "UGX", "TZS", "ZMW", "BDT"}

    assert {("SBP", "RUB"), ("BANK_ACCOUNT", "RUB")} <= pairs
    assert {("SIM", c) for c in mobile} <= pairs
    assert any(t == "EMAIL" for t, _ in pairs)
    assert all(isinstance(s["id"], int) for s in services)
    balance = api.get("/v1/merchants/balance").json()
    assert balance["merchantId"] == sandbox.merchant_id
    assert {"currency", "available", "held"} <= set(balance["balances"][0])


@pytest.mark.parametrize("token", [None, "", "wrong-token", "sandbox-secret-token-x"])
def test_requests_without_a_valid_token_get_401(sandbox, token):
    headers = {} if token is None else {"X-Api-Token": token}
    response = httpx.post(f"{sandbox.url}/v1/payouts", json=payout_body(), headers=headers)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert sandbox_stats(sandbox)["payouts"] == []
