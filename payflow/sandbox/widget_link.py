"""The widget's check of a signed link: payload fields, signature, merchant, expiry.

Written from the spec alone (no `payflow.api`), so the client's signing and this check test each
other. Order: the signature over the payload string first (nothing of an unsigned payload is
trusted), then the fields (PAYLOAD_INVALID, `detail` names the field), then the merchant
(SIGNATURE_INVALID), then the expiry (LINK_EXPIRED).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from payflow.sandbox import catalogue

PAYLOAD_INVALID = "PAYLOAD_INVALID"
SIGNATURE_INVALID = "SIGNATURE_INVALID"
LINK_EXPIRED = "LINK_EXPIRED"

FIELDS = ("merchantId", "userId", "amount", "currency", "externalId", "serviceId", "expiresAt")
OPTIONAL_FIELDS = frozenset({"serviceId"})
MAX_ID_LENGTH = 255
MAX_LIFETIME_SECONDS = 24 * 3600
AMOUNT_MIN, AMOUNT_MAX = Decimal("1"), Decimal("99999999.99")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*={0,2}")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")
_AMOUNT_TEXT = re.compile(r"[0-9]+(?:\.[0-9]{1,2})?")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class WidgetLinkError(Exception):
    """Why a link is unusable: a widget error code and, for PAYLOAD_INVALID, the field."""

    def __init__(self, code: str, detail: str | None = None) -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail

    def as_json(self) -> dict[str, str]:
        """The `data` of the widget's `error` message."""
        return {"code": self.code, **({"detail": self.detail} if self.detail else {})}


@dataclass(frozen=True)
class WidgetLink:
    """A link that passed every check."""

    merchant_id: str
    user_id: str
    amount: Decimal
    external_id: str
    service_id: int
    expires_at: int


def link_signature(payload: str, token: str) -> str:
    """Lowercase hex HMAC-SHA512 of the payload string, keyed with the API token."""
    return hmac.new(token.encode("utf-8"), payload.encode("utf-8"), hashlib.sha512).hexdigest()


def check_link(
    payload: str | None,
    signature: str | None,
    *,
    merchant_id: str,
    token: str,
    now: float,
    allow_expired: bool = False,
) -> WidgetLink:
    """The link's payload, or WidgetLinkError with the code the widget shows and sends."""
    if not payload:
        raise WidgetLinkError(PAYLOAD_INVALID, "payload: missing")
    if not signature or not _SIGNATURE.fullmatch(signature):
        raise WidgetLinkError(SIGNATURE_INVALID)
    if not hmac.compare_digest(link_signature(payload, token), signature):
        raise WidgetLinkError(SIGNATURE_INVALID)
    data = _decode(payload)
    link = _fields(data, now)
    if link.merchant_id != merchant_id:
        raise WidgetLinkError(SIGNATURE_INVALID)
    if link.expires_at <= now and not allow_expired:
        raise WidgetLinkError(LINK_EXPIRED)
    return link


def _decode(payload: str) -> dict[str, Any]:
    if not _BASE64URL.fullmatch(payload):
        raise WidgetLinkError(PAYLOAD_INVALID, "payload: not base64url")
    try:
        raw = base64.urlsafe_b64decode(payload.rstrip("=") + "=" * (-len(payload.rstrip("=")) % 4))
        data = json.loads(raw.decode("utf-8"), parse_float=Decimal, parse_constant=_no_constant)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise WidgetLinkError(PAYLOAD_INVALID, "payload: not base64url JSON") from None
    if not isinstance(data, dict):
        raise WidgetLinkError(PAYLOAD_INVALID, "payload: not a JSON object")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _fields(data: dict[str, Any], now: float) -> WidgetLink:
    for name in data:
        if name not in FIELDS:
            raise WidgetLinkError(PAYLOAD_INVALID, f"{str(name)[:60]}: unknown field")
    for name in FIELDS:
        if name not in data and name not in OPTIONAL_FIELDS:
            raise WidgetLinkError(PAYLOAD_INVALID, f"{name}: required")
    merchant_id = _text(data, "merchantId")
    try:
        uuid.UUID(merchant_id)
    except ValueError:
        raise WidgetLinkError(PAYLOAD_INVALID, "merchantId: not a UUID") from None
    if _text(data, "currency") != "RUB":
        raise WidgetLinkError(PAYLOAD_INVALID, "currency: must be RUB")
    return WidgetLink(
        merchant_id=merchant_id,
        user_id=_text(data, "userId", MAX_ID_LENGTH),
        amount=_amount(data["amount"]),
        external_id=_text(data, "externalId", MAX_ID_LENGTH),
        service_id=_service_id(data.get("serviceId")),
        expires_at=_expires_at(data["expiresAt"], now),
    )


def _text(data: dict[str, Any], name: str, max_length: int | None = None) -> str:
    value = data[name]
    if not isinstance(value, str) or not value:
        raise WidgetLinkError(PAYLOAD_INVALID, f"{name}: must be a non-empty string")
    if _CONTROL.search(value):
        raise WidgetLinkError(PAYLOAD_INVALID, f"{name}: control characters are not allowed")
    if max_length is not None and len(value) > max_length:
        raise WidgetLinkError(PAYLOAD_INVALID, f"{name}: at most {max_length} characters")
    return value


def _amount(value: object) -> Decimal:
    if isinstance(value, str):
        if not _AMOUNT_TEXT.fullmatch(value):
            raise WidgetLinkError(PAYLOAD_INVALID, "amount: not a decimal with at most 2 digits")
        amount = Decimal(value)
    elif isinstance(value, int | Decimal) and not isinstance(value, bool):
        amount = Decimal(value)
    else:
        raise WidgetLinkError(PAYLOAD_INVALID, "amount: must be a string or a number")
    try:
        exact = amount == amount.quantize(Decimal("0.01"))
    except InvalidOperation:
        exact = False
    if not exact:
        raise WidgetLinkError(PAYLOAD_INVALID, "amount: at most 2 digits after the point")
    if not AMOUNT_MIN <= amount <= AMOUNT_MAX:
        raise WidgetLinkError(PAYLOAD_INVALID, "amount: must be from 1 to 99999999.99")
    return amount


def _service_id(value: object) -> int:
    if value is None:
        default = catalogue.default_service("BANK_ACCOUNT", "RUB")
        assert default is not None, "the catalogue has a BANK_ACCOUNT RUB service"
        return default.id
    if isinstance(value, bool) or not isinstance(value, int):
        raise WidgetLinkError(PAYLOAD_INVALID, "serviceId: must be an integer")
    service = catalogue.SERVICES_BY_ID.get(value)
    if service is None or (service.payment_type, service.currency) != ("BANK_ACCOUNT", "RUB"):
        raise WidgetLinkError(PAYLOAD_INVALID, "serviceId: not a BANK_ACCOUNT RUB service")
    return value


def _expires_at(value: object, now: float) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise WidgetLinkError(PAYLOAD_INVALID, "expiresAt: must be an integer (Unix seconds)")
    if value - now > MAX_LIFETIME_SECONDS:
        raise WidgetLinkError(PAYLOAD_INVALID, "expiresAt: at most 24 hours ahead")
    return value
