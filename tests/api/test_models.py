"""Models: tolerant responses, strict requests where the spec is strict, balances of any shape."""

from __future__ import annotations

from decimal import Decimal

import pytest
from api_support import payout_request
from pydantic import ValidationError

from payflow.api.jsonbody import dumps, loads
from payflow.api.models import (
    Balance,
    Card,
    Customer,
    H2HStatus,
    Order,
    OrderRequest,
    Payout,
    PayoutRequest,
    Refund,
    RefundRequest,
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"balances": [{"currency": "RUB", "available": "10.50"}]}, {"RUB": Decimal("10.50")}),
        ({"accounts": [{"currency": "XOF", "amount": 500}]}, {"XOF": Decimal(500)}),
        ({"balance": {"RUB": "1.10", "XOF": "5"}}, {"RUB": Decimal("1.10"), "XOF": Decimal(5)}),
        ({"RUB": "7.00"}, {"RUB": Decimal("7.00")}),
        ({"currency": "rub", "balance": "3"}, {"RUB": Decimal(3)}),
        ({"available": {"RUB": "2"}, "held": {"RUB": "1"}}, {"RUB": Decimal(2)}),
        ({"balances": {"RUB": {"available": "4", "held": "1"}}}, {"RUB": Decimal(4)}),
    ],
)
def test_balance_shapes_recognised(body, expected):
    balance = Balance.model_validate(loads(dumps({"merchantId": "m", **body})))
    assert balance.available_by_currency() == expected
    assert balance.merchant_id == "m"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"total": "5"},
        {
            "balances": [
                {"currency": "RUB", "available": "1"},
                {"currency": "RUB", "available": "2"},
            ]
        },
        {"balances": [{"currency": "RUB"}]},
        {"RUB": "lots"},
        {"a": {"RUB": "1"}, "b": {"RUB": "2"}},
    ],
)
def test_balance_unknown_shapes_give_none(body):
    assert Balance.model_validate({"merchantId": "m", **body}).available_by_currency() is None


def test_payout_request_rules():
    assert payout_request().to_body()["paymentType"] == "SBP"
    with pytest.raises(ValidationError):
        payout_request(amount="0")
    with pytest.raises(ValidationError):
        payout_request(external_id="x" * 256)
    with pytest.raises(ValidationError, match="ISO 4217"):
        PayoutRequest.model_validate({**payout_request().to_body(), "currency": "rub"})


def test_payout_request_allows_fields_the_spec_does_not_show():
    body = payout_request().model_validate({**payout_request().to_body(), "bik": "044525225"})
    assert body.to_body()["bik"] == "044525225"


def test_requisites_stay_out_of_request_and_payout_reprs():
    request = payout_request(requisites="79001234567")
    payout = Payout.model_validate(
        {"id": "p", "status": "CREATED", "account": {"requisites": "79001234567"}}
    )
    assert "79001234567" not in repr(request) and "79001234567" not in repr(payout)


def test_payout_reads_numbers_where_text_is_documented():
    payout = Payout.model_validate(loads(b'{"id": 17, "status": "CREATED", "amount": 10.10}'))
    assert payout.id == "17" and payout.amount == Decimal("10.10")


def test_card_data_is_secret_in_repr_but_sent_in_full():
    card = Card(
        cardholder_name="IVAN P", card_number="4111111111111111", cvv="123", expiry_date="12/30"
    )
    assert "4111111111111111" not in repr(card) and "123" not in repr(card)
    assert card.to_body() == {
        "cardholderName": "IVAN P",
        "cardNumber": "4111111111111111",
        "cvv": "123",
        "expiryDate": "12/30",
    }
    with pytest.raises(ValidationError, match="MM/YY"):
        Card(cardholder_name="I", card_number="4", cvv="1", expiry_date="13/30")


def test_order_request_amount_is_text_and_wallet_fields_are_checked():
    order = OrderRequest(
        amount=Decimal("10.50"),
        currency="RUB",
        extra_params="walletA_pay",
        customer=Customer(email="a@b.c"),
    )
    assert (
        dumps(order.to_body()) == b'{"amount":"10.50","currency":"RUB","extraParams":"walletA_pay",'
        b'"customer":{"email":"a@b.c"}}'
    )
    with pytest.raises(ValidationError, match="ip"):
        OrderRequest(
            amount=Decimal(1),
            currency="RUB",
            extra_params="walletApay",
            customer=Customer(email="a@b.c"),
        )


def test_order_response_drops_echoed_card_data():
    order = Order.model_validate(
        {"id": "o", "status": "CREATED", "card": {"cardNumber": "4111"}, "x": 1}
    )
    assert "card" not in (order.model_extra or {}) and order.model_extra == {"x": 1}


def test_h2h_status_finality():
    assert not H2HStatus.model_validate({"status": "PROCESSING", "isSmsRequired": True}).is_final
    assert H2HStatus.model_validate({"status": "EXPIRED"}).is_final


def test_refund_request_limits_and_refund_object():
    assert RefundRequest(order_id="o", reason="r" * 1000).to_body() == {
        "orderId": "o",
        "reason": "r" * 1000,
    }
    with pytest.raises(ValidationError):
        RefundRequest(order_id="o", reason="r" * 1001)
    refund = Refund.model_validate(
        {"id": "r", "status": "PENDING", "debitAmount": "9.70", "debitBasis": "MERCHANT_RECEIVED"}
    )
    assert refund.debit_amount == Decimal("9.70")
