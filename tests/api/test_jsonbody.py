"""Amounts cross the wire exactly: no float ever touches them (invariant 7)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from payflow.api.jsonbody import decimal_text, dumps, loads
from payflow.api.models import PayoutAccount, PayoutRequest


def _request(amount: Decimal) -> PayoutRequest:
    account = PayoutAccount(name="Ivan", requisites="79001234567", user_id="u-1")
    return PayoutRequest(amount=amount, currency="RUB", payment_type="SBP", account=account)


def test_huge_amount_survives_exactly_as_a_json_number():
    body = dumps(_request(Decimal("12345678901234567.89")).to_body())
    assert b'"amount":12345678901234567.89,' in body
    assert loads(body)["amount"] == Decimal("12345678901234567.89")
    # The same value through float would lose digits: the check above can fail.
    assert json.dumps(float("12345678901234567.89")) != "12345678901234567.89"


def test_sum_of_tenths_is_written_without_float_artifacts():
    amount = Decimal("0.1") + Decimal("0.2")
    body = dumps({"amount": amount, "items": [Decimal("1.10"), Decimal("0.30000")]})
    assert body == b'{"amount":0.3,"items":[1.10,0.30000]}'
    assert b"0.30000000000000004" not in body


def test_exponent_decimals_are_written_positionally():
    assert decimal_text(Decimal("1E+2")) == "100"
    assert dumps({"a": Decimal("1E-7")}) == b'{"a":0.0000001}'


def test_many_decimals_keep_their_own_places():
    values = [Decimal(i) / 100 for i in range(12)]
    assert loads(dumps(values)) == values


@pytest.mark.parametrize("bad", [Decimal("NaN"), Decimal("Infinity")])
def test_non_finite_amounts_are_refused(bad):
    with pytest.raises(ValueError):
        dumps({"amount": bad})


def test_floats_are_refused_in_bodies_and_models():
    with pytest.raises(TypeError):
        dumps({"amount": 0.1})
    with pytest.raises(ValueError, match="never float"):
        _request(0.1)  # type: ignore[arg-type]


def test_a_string_that_looks_like_the_marker_is_left_alone():
    body = dumps({"note": "decimal-0", "amount": Decimal("5")})
    assert loads(body) == {"note": "decimal-0", "amount": 5}
