"""Widget links and webhook signatures, checked against values computed here with the stdlib."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest
from api_support import TOKEN
from pydantic import SecretStr, ValidationError

from payflow.api.errors import SignatureInvalidError
from payflow.api.signing import sign, verify_signature, widget_link
from payflow.api.widget import WidgetPayload

MERCHANT = "3f6c1a52-8d4e-4b7a-9c1e-5a2b7d9e0f13"
NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _fields(**overrides: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "merchantId": MERCHANT,
        "userId": "client-42",
        "amount": "1500.50",
        "currency": "RUB",
        "externalId": "widget-0001",
        "expiresAt": int((datetime.now(UTC) + timedelta(minutes=20)).timestamp()),
    }
    fields.update(overrides)
    return fields


def _check(**overrides: object) -> WidgetPayload:
    return WidgetPayload.model_validate(_fields(**overrides))


def test_sign_is_lowercase_hex_hmac_sha512():
    expected = hmac.new(TOKEN.encode(), b"abc", hashlib.sha512).hexdigest()
    assert sign(b"abc", TOKEN) == expected
    assert sign("abc", SecretStr(TOKEN)) == expected
    assert expected == expected.lower() and len(expected) == 128


def test_widget_link_signs_the_encoded_payload_string():
    fields = _fields()
    link = widget_link("https://widget.test/", fields, TOKEN)
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://widget.test/payout-widget"
    query = parse_qs(parts.query)
    payload, signature = query["payload"][0], query["signature"][0]
    # Independent check: RFC 4648 §5 alphabet, HMAC-SHA512 over the string as placed in the link.
    assert set(payload) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert signature == hmac.new(TOKEN.encode(), payload.encode(), hashlib.sha512).hexdigest()
    decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert decoded == {**fields, "amount": "1500.5"}  # no serviceId key when not set


def test_payload_with_url_unsafe_base64_bytes_uses_dash_and_underscore():
    payload = _check(userId="ÿÿÿ>>>???", externalId="~~~")
    encoded = payload.encode()
    assert "+" not in encoded and "/" not in encoded and "=" not in encoded
    assert ("-" in encoded) or ("_" in encoded)
    raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    assert json.loads(raw)["userId"] == "ÿÿÿ>>>???"


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ({"extra": 1}, "extra"),
        ({"userId": "a\nb"}, "control"),
        ({"externalId": "a\u2028b"}, "control"),
        ({"userId": "x" * 256}, "255"),
        ({"externalId": "x" * 256}, "255"),
        ({"amount": "0.99"}, "from 1"),
        ({"amount": "100000000.00"}, "from 1"),
        ({"amount": "10.001"}, "two digits"),
        ({"amount": 10.1}, "never float"),
        ({"currency": "USD"}, "RUB"),
        ({"merchantId": "not-a-uuid"}, "UUID"),
        ({"serviceId": "7"}, "integer"),
        ({"expiresAt": int((datetime.now(UTC) + timedelta(hours=25)).timestamp())}, "24 hours"),
        ({"expiresAt": int((datetime.now(UTC) - timedelta(minutes=1)).timestamp())}, "future"),
    ],
)
def test_widget_payload_rules(override, problem):
    with pytest.raises(ValidationError, match=problem):
        _check(**override)


def test_widget_payload_limits_are_inclusive_and_text_amount_is_safe():
    assert _check(amount="1").amount == Decimal("1")
    assert _check(amount="99999999.99", serviceId=12).service_id == 12
    assert _check(amount=Decimal("10.10")).to_json().count(b'"amount":"10.1"') == 1
    assert _check(userId="x" * 255, externalId="y" * 255)


def test_widget_expiry_checked_against_the_given_now():
    expires = int((NOW + timedelta(hours=24)).timestamp())
    fields = _fields(expiresAt=expires)
    assert WidgetPayload.model_validate(fields, context={"now": NOW}).expires_at == expires
    with pytest.raises(ValidationError, match="24 hours"):
        WidgetPayload.model_validate(fields, context={"now": NOW - timedelta(seconds=1)})


def test_verify_signature_accepts_the_exact_body_only():
    body = b'{"id":"p-1","status":"COMPLETED"}'
    signature = hmac.new(TOKEN.encode(), body, hashlib.sha512).hexdigest()
    verify_signature(body, signature, TOKEN)
    verify_signature(body, signature.upper(), SecretStr(TOKEN))
    with pytest.raises(SignatureInvalidError, match="does not match"):
        verify_signature(body.replace(b"COMPLETED", b"FAILED"), signature, TOKEN)
    with pytest.raises(SignatureInvalidError, match="does not match"):
        verify_signature(body, signature, "another-token")
    with pytest.raises(SignatureInvalidError, match="missing"):
        verify_signature(body, None, TOKEN)
    with pytest.raises(SignatureInvalidError, match="does not match"):
        verify_signature(body, "Ω" * 128, TOKEN)
