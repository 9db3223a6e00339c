"""Orders, H2H and refunds: the spec's rules and codes, balance credit and the held debit."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sandbox_support import balance_of, wait_for

CARD = {
    "cardholderName": "IVAN PETROV",
    "cardNumber": "4111111111111111",
    "cvv": "123",
    "expiryDate": "12/30",
}


def _order(api, **changes) -> dict:
    response = api.post("/v1/orders", json={"amount": "150.00", "currency": "RUB", **changes})
    assert response.status_code == 201, response.text
    return response.json()


def _paid_order(api, sandbox, **changes) -> dict:
    order = _order(api, **changes)
    assert api.post(f"{sandbox.url}/_sandbox/orders/{order['id']}/complete").status_code == 200
    return order


def test_order_is_created_then_completed_by_the_sandbox_route(api, sandbox):
    before = Decimal(balance_of(api, "RUB")["available"])
    order = _order(api, externalId="o-1", callbackUrl="http://127.0.0.1:9/o")

    assert order["status"] == "CREATED" and order["paymentLink"]
    assert api.post(f"{sandbox.url}/_sandbox/orders/{order['id']}/complete").status_code == 200
    assert api.get(f"/v1/orders/{order['id']}").json()["status"] == "COMPLETED"
    assert Decimal(balance_of(api, "RUB")["available"]) == before + 150
    assert (
        api.post(
            "/v1/orders", json={"amount": "1", "currency": "RUB", "externalId": "o-1"}
        ).status_code
        == 409
    )
    assert api.get("/v1/orders/unknown").status_code == 404


@pytest.mark.parametrize(
    ("extra_params", "customer", "status"),
    [
        ("walletA_pay", {"email": "a@example.org"}, "CREATED"),
        ("walletBpay", {"email": "a@example.org"}, "DECLINED"),  # ip missing
        ("walletC-pay", {"email": "a@example.org"}, "DECLINED"),  # unknown wallet
    ],
)
def test_wallet_orders_decline_on_wrong_params(api, extra_params, customer, status):
    order = _order(api, extraParams=extra_params, customer=customer)
    assert order["status"] == "CREATED"

    if status == "DECLINED":
        wait_for(api, f"/v1/orders/{order['id']}", lambda o: o["status"] == "DECLINED")
    else:
        assert api.get(f"/v1/orders/{order['id']}").json()["status"] == "CREATED"


def test_card_in_order_needs_the_full_customer(api):
    response = api.post(
        "/v1/orders",
        json={"amount": "10", "currency": "RUB", "card": CARD, "customer": {"email": "a@b.c"}},
    )

    assert response.status_code == 400
    assert "customer." in response.json()["error"]["message"]


def test_h2h_card_then_sms_code_completes_the_order(api):
    order = _order(api)
    path = f"/v1/orders/{order['id']}/h2h"
    assert api.get(f"{path}/status").json() == {"isSmsRequired": False, "status": "INITIALIZING"}

    assert api.post(f"{path}/card", json={**CARD, "cvv": ""}).status_code == 400
    assert api.post(f"{path}/card", json=CARD).json()["id"] == order["id"]
    assert api.get(f"{path}/status").json() == {"isSmsRequired": True, "status": "PROCESSING"}
    wrong = api.post(f"{path}/code", json={"code": "000000"}).json()
    right = api.post(f"{path}/code", json={"code": "123456"}).json()

    assert wrong == {"isSmsRequired": True, "status": "PROCESSING"}
    assert right == {"isSmsRequired": False, "status": "SUCCESS"}
    wait_for(api, f"/v1/orders/{order['id']}", lambda o: o["status"] == "COMPLETED")


def test_refund_holds_the_debit_then_completes_and_order_becomes_refund(api, sandbox):
    order = _paid_order(api, sandbox, externalId="o-r")
    before = balance_of(api, "RUB")

    refund = api.post("/v1/refunds", json={"orderId": order["id"], "externalId": "r-1"})

    assert refund.status_code == 201
    body = refund.json()
    assert (body["status"], body["amount"], body["orderExternalId"]) == ("PENDING", "150.00", "o-r")
    held = balance_of(api, "RUB")
    assert Decimal(held["held"]) == Decimal(before["held"]) + 150
    assert Decimal(held["available"]) == Decimal(before["available"]) - 150
    wait_for(api, f"/v1/refunds/{body['id']}", lambda r: r["status"] == "COMPLETED")
    assert api.get("/v1/refunds/external/r-1").json()["id"] == body["id"]
    assert api.get(f"/v1/orders/{order['id']}").json()["status"] == "REFUND"
    assert Decimal(balance_of(api, "RUB")["held"]) == Decimal(before["held"])


def test_refund_rules_and_codes(api, sandbox):
    paid = _paid_order(api, sandbox)
    unpaid = _order(api)

    def refund(**body):
        return api.post("/v1/refunds", json=body)

    assert refund(orderId="00000000-0000-0000-0000-000000000000").status_code == 404
    assert refund(orderId=unpaid["id"]).status_code == 409
    assert refund(orderId=paid["id"], amount="100.00").status_code == 400
    assert refund(orderId=paid["id"], reason="x" * 1001).status_code == 400
    assert refund(orderId=paid["id"], amount=150, externalId="r-2").status_code == 201
    second = refund(orderId=paid["id"])
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "REFUND_EXISTS"
    other = _paid_order(api, sandbox)
    assert refund(orderId=other["id"], externalId="r-2").status_code == 409


def test_refund_is_refused_when_balance_cannot_cover_the_debit(make_sandbox):
    import httpx

    sandbox = make_sandbox(balances={"RUB": Decimal(0)})
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}) as api:
        order = _paid_order(api, sandbox)  # credits 150
        api.post("/v1/payouts", json={
            "amount": "100", "currency": "RUB", "paymentType": "BANK_ACCOUNT",
            "account": {"name": "A", "requisites": "40817810099910005555", "userId": "u"},
        })  # fmt: skip

        response = api.post("/v1/refunds", json={"orderId": order["id"]})

        assert response.status_code == 409
        assert response.json()["error"]["code"] == "INSUFFICIENT_BALANCE"
