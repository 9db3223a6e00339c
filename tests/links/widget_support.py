"""Independent helpers for widget tests: links signed here with hmac, not with payflow.api."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

from payflow.schemas.requisites import account_with_key

BIK = "044525225"  # Сбербанк in the sandbox's bank list


def payload_dict(merchant_id: str, **overrides: Any) -> dict[str, Any]:
    """A valid payload with fields replaced (a value of None removes the field)."""
    payload: dict[str, Any] = {
        "merchantId": merchant_id,
        "userId": "user-1",
        "amount": "1500.50",
        "currency": "RUB",
        "externalId": "link-1",
        "expiresAt": int(time.time()) + 1800,
    }
    payload.update(overrides)
    return {k: v for k, v in payload.items() if v is not None}


def encode(payload: dict[str, Any] | str, *, padded: bool = False) -> str:
    """base64url of the JSON (or of the given text), with or without `=` padding."""
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    text = base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii")
    return text if padded else text.rstrip("=")


def hmac_hex(text: str, key: str) -> str:
    """Lowercase hex HMAC-SHA512, computed here with the standard library."""
    return hmac.new(key.encode(), text.encode(), hashlib.sha512).hexdigest()


def signed_query(
    payload: dict[str, Any] | str, key: str, *, padded: bool = False
) -> dict[str, str]:
    """`{"payload", "signature"}` of a link signed with `key`."""
    encoded = encode(payload, padded=padded)
    return {"payload": encoded, "signature": hmac_hex(encoded, key)}


def widget_url(base_url: str, query: dict[str, str]) -> str:
    """The widget page address for a signed query."""
    return f"{base_url}/payout-widget?payload={query['payload']}&signature={query['signature']}"


def account(last4: str, bik: str = BIK) -> str:
    """A 20-digit individual ruble account whose key fits `bik`, ending in `last4`."""
    return account_with_key(bik, "40817810" + "0" + "1234567" + last4)


def requisites(last4: str = "0042", **overrides: str) -> dict[str, str]:
    """Valid bank details for the form."""
    values = {
        "fullName": "Иванов Иван Иванович",
        "phone": "+79001234567",
        "bik": BIK,
        "account": account(last4),
        "birthDate": "15.04.1990",
    }
    values.update(overrides)
    return values
