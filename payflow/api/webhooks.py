"""Signed webhooks: verify the raw body first, then read the event.

The spec does not show the webhook body. Accepted: the object itself (a payout, refund or order),
or a wrapper such as {"type"|"event": ..., "data"|"payout"|"object"|...: {...}}, nested at most
twice. An event needs an id or an externalId, and a status; anything else is a
WebhookPayloadError (a ValueError). The kind comes from the `X-Type` header, else the body.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from payflow.api.errors import WebhookPayloadError
from payflow.api.jsonbody import loads
from payflow.api.signing import Token, verify_signature
from payflow.redact import service_text

__all__ = [
    "OrderEvent",
    "PayoutEvent",
    "RefundEvent",
    "parse_order_webhook",
    "parse_payout_webhook",
    "parse_refund_webhook",
    "verify_signature",
]

_WRAPPER_KEYS = ("data", "payout", "refund", "order", "object", "payload", "body")
_TYPE_KEYS = ("type", "event", "eventType", "event_type")


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    event_type: str | None
    status: str
    external_id: str | None
    status_message: str | None = None
    data: dict[str, Any] = Field(repr=False)  # the object as received, for whoever needs more


class PayoutEvent(_Event):
    """A payout status change (PAYOUT_UPDATE)."""

    payout_id: str | None
    amount: Decimal | None = None


class RefundEvent(_Event):
    """A refund status change (REFUND_UPDATE)."""

    refund_id: str | None
    order_id: str | None = None
    debit_amount: Decimal | None = None  # what the merchant's balance is debited, when sent


class OrderEvent(_Event):
    """An order status change (ORDER_UPDATE), including the move to REFUND."""

    order_id: str | None


def parse_payout_webhook(body: bytes, headers: Mapping[str, str], token: Token) -> PayoutEvent:
    """Verify `X-Signature` over the raw body, then read the payout event."""
    event_type, obj = _verified_object(body, headers, token)
    return PayoutEvent(
        event_type=event_type,
        payout_id=_text(obj.get("id")),
        amount=_amount(obj.get("amount")),
        **_common(obj),
    )


def parse_refund_webhook(body: bytes, headers: Mapping[str, str], token: Token) -> RefundEvent:
    """Verify `X-Signature` over the raw body, then read the refund event."""
    event_type, obj = _verified_object(body, headers, token)
    return RefundEvent(
        event_type=event_type,
        refund_id=_text(obj.get("id")),
        order_id=_text(obj.get("orderId")),
        debit_amount=_amount(obj.get("debitAmount")),
        **_common(obj),
    )


def parse_order_webhook(body: bytes, headers: Mapping[str, str], token: Token) -> OrderEvent:
    """Verify `X-Signature` over the raw body, then read the order event."""
    event_type, obj = _verified_object(body, headers, token)
    return OrderEvent(event_type=event_type, order_id=_text(obj.get("id")), **_common(obj))


def _verified_object(
    body: bytes, headers: Mapping[str, str], token: Token
) -> tuple[str | None, dict[str, Any]]:
    verify_signature(body, _header(headers, "x-signature"), token)
    try:
        document = loads(body)
    except ValueError:
        raise WebhookPayloadError("webhook body is not JSON") from None
    obj = _find_object(document, depth=0)
    if obj is None:
        raise WebhookPayloadError(
            "webhook body has no object with an id or externalId and a status"
        )
    event_type = _header(headers, "x-type")
    if event_type is None and isinstance(document, dict):
        event_type = next((str(document[k]) for k in _TYPE_KEYS if document.get(k)), None)
    return event_type, obj


def _find_object(value: Any, depth: int) -> dict[str, Any] | None:
    if not isinstance(value, dict) or depth > 2:
        return None
    if _text(value.get("status")) and (_text(value.get("id")) or _text(value.get("externalId"))):
        return value
    for key in _WRAPPER_KEYS:
        found = _find_object(value.get(key), depth + 1)
        if found is not None:
            return found
    return None


def _common(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": _text(obj.get("status")),
        "external_id": _text(obj.get("externalId")),
        "status_message": _service_text(obj.get("statusMessage")),
        "data": obj,
    }


def _service_text(value: Any) -> str | None:
    text = _text(value)
    return service_text(text) if text else text


def _amount(value: Any) -> Decimal | None:
    # Informational only (the ledger keeps what was sent); an unreadable amount is dropped.
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        return None
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return None
    return amount if amount.is_finite() else None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool | dict | list):
        return None
    text = str(value)
    return text or None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    # Starlette and httpx headers are case-insensitive; a plain dict may not be.
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value
