"""The sandbox's refund behaviour: outcomes by externalId, 403 per payment method, counters."""

from __future__ import annotations

import time

import httpx
from refunds_support import paid_orders
from support.stats import sandbox_stats
from support.waiting import sandbox_is_idle, wait_until

HEADERS = {"X-Api-Token": "sandbox-secret-token"}


def _post(server, **body):
    return httpx.post(f"{server.url}/v1/refunds", json=body, headers=HEADERS, timeout=10)


def _wait_for(server, refund_id: str, status: str) -> dict:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        refund = httpx.get(f"{server.url}/v1/refunds/{refund_id}", headers=HEADERS).json()
        if refund["status"] == status:
            return refund
        time.sleep(0.05)
    raise AssertionError(f"refund never reached {status}")


def test_bulk_orders_are_completed_and_credit_the_balance(make_sandbox):
    sandbox = make_sandbox(balances={"RUB": 0})
    ids = paid_orders(sandbox, 3, amount="10.50")
    orders = {o["id"]: o for o in sandbox_stats(sandbox)["orders"]}
    assert all(orders[i]["status"] == "COMPLETED" for i in ids)
    rub = next(b for b in sandbox_stats(sandbox)["balances"] if b["currency"] == "RUB")
    assert rub["available"] == "31.50"


def test_outcomes_follow_the_last_four_characters_of_the_external_id(sandbox):
    ids = paid_orders(sandbox, 5)
    created = {
        suffix: _post(sandbox, orderId=order, externalId=f"r-{suffix}").json()
        for suffix, order in zip(("0001", "1111", "2222", "5555", "7777"), ids, strict=True)
    }
    assert created["2222"]["status"] == "FAILED"  # rejected at once
    assert created["7777"]["status"] == "MANUAL"
    assert _wait_for(sandbox, created["0001"]["id"], "COMPLETED")["statusMessage"] is None
    assert _wait_for(sandbox, created["1111"]["id"], "FAILED")["statusMessage"] is None
    assert _wait_for(sandbox, created["7777"]["id"], "COMPLETED")
    # Nothing is scheduled any more: a refund that were to move would have a pending move.
    wait_until(lambda: sandbox_is_idle(sandbox_stats(sandbox)), what="the sandbox to go idle")
    still = httpx.get(f"{sandbox.url}/v1/refunds/{created['5555']['id']}", headers=HEADERS)
    assert still.json()["status"] == "PENDING"
    orders = {o["id"]: o["status"] for o in sandbox_stats(sandbox)["orders"]}
    assert orders[ids[0]] == "REFUND" and orders[ids[1]] == "COMPLETED"


def test_an_order_without_api_refunds_answers_403_with_a_message(sandbox):
    [order] = paid_orders(sandbox, 1, apiRefunds=False)
    response = _post(sandbox, orderId=order, externalId="r-403")
    assert response.status_code == 403
    assert "not enabled" in response.json()["error"]["message"]


def test_attempts_and_refunds_are_counted_per_external_id_and_order(sandbox):
    [order] = paid_orders(sandbox, 1)
    assert _post(sandbox, orderId=order, externalId="r-once").status_code == 201
    again = _post(sandbox, orderId=order, externalId="r-once")
    assert again.status_code == 409
    seen = sandbox_stats(sandbox)
    assert seen["refundCreateAttempts"]["r-once"] == 2
    assert seen["refundsByExternalId"] == {"r-once": 1}
    assert seen["refundsByOrderId"] == {order: 1}


def test_demo_orders_exist_from_start_for_the_sample_file(sandbox):
    orders = {o["id"]: o for o in sandbox_stats(sandbox)["orders"]}
    assert orders["0b8f3c2e-5a1d-4e6b-9f7a-100000000001"]["status"] == "COMPLETED"
    assert orders["0b8f3c2e-5a1d-4e6b-9f7a-100000000006"]["status"] == "CREATED"
