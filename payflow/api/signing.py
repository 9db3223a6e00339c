"""HMAC-SHA512 signing shared by webhooks and widget links (key: the merchant API token)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr

from payflow.api.errors import SignatureInvalidError
from payflow.api.widget import WidgetPayload

Token = str | SecretStr


def _key(token: Token) -> bytes:
    secret = token.get_secret_value() if isinstance(token, SecretStr) else token
    if not secret:
        raise ValueError("an API token is required to sign or verify")
    return secret.encode("utf-8")


def sign(data: bytes | str, token: Token) -> str:
    """Lowercase hex HMAC-SHA512 of `data` (text is signed as UTF-8) keyed with the token."""
    message = data.encode("utf-8") if isinstance(data, str) else data
    return hmac.new(_key(token), message, hashlib.sha512).hexdigest()


def verify_signature(body: bytes, signature: str | None, token: Token) -> None:
    """Raise SignatureInvalidError unless `signature` is the HMAC of `body`; constant time."""
    if signature is None or not signature.strip():
        raise SignatureInvalidError("signature missing")
    expected = sign(body, token).encode("ascii")
    given = signature.strip().lower().encode("utf-8", errors="replace")
    if not hmac.compare_digest(expected, given):
        raise SignatureInvalidError("signature does not match the body")


def widget_link(widget_url: str, payload: WidgetPayload | Mapping[str, Any], token: Token) -> str:
    """Signed `{widget_url}/payout-widget?payload=...&signature=...`; never log the result."""
    checked = (
        payload if isinstance(payload, WidgetPayload) else WidgetPayload.model_validate(payload)
    )
    encoded = checked.encode()
    # Both values are URL-safe already; quote() only guards against a future change of alphabet.
    return (
        f"{widget_url.rstrip('/')}/payout-widget"
        f"?payload={quote(encoded, safe='-_')}&signature={sign(encoded, token)}"
    )
