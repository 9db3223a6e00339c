"""Refunds: full amount of a COMPLETED order only, debit held at creation, then a final status.

The outcome is chosen by the last four characters of the refund's externalId (see OUTCOMES);
statusMessage stays null, as the spec says it always is in the merchant API.
"""

from __future__ import annotations

import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox.errors import ApiError, bad_request, conflict, found
from payflow.sandbox.gate import LostResponse
from payflow.sandbox.orders import move_order
from payflow.sandbox.state import SandboxState, now_iso, state_of
from payflow.sandbox.validation import (
    MAX_EXTERNAL_ID,
    optional_string,
    parse_amount,
    parse_json_object,
    required_string,
)

REFUND_UPDATE = "REFUND_UPDATE"
JSON = "application/json"
MAX_REASON = 1000
BLOCKING = frozenset({"MANUAL", "PENDING", "COMPLETED"})
NOT_ENABLED = "refunds via the API are not enabled for this order's payment method"

# last four characters of the externalId -> (initial status, final status or None: stays)
OUTCOMES: dict[str, tuple[str, str | None]] = {
    "1111": ("PENDING", "FAILED"),
    "2222": ("FAILED", "FAILED"),  # the provider rejects at once: FAILED is the initial status
    "3333": ("PENDING", "CANCELED"),
    "5555": ("PENDING", None),  # stays PENDING
    "7777": ("MANUAL", "COMPLETED"),  # processed by the platform by hand
}


def outcome_for(external_id: str | None) -> tuple[str, str | None]:
    """The deterministic initial and final status for a refund externalId."""
    return OUTCOMES.get((external_id or "")[-4:], ("PENDING", "COMPLETED"))


async def post_refund(request: Request) -> Response:
    """Create a PENDING refund (201) holding the debit; 400/404/409 per the spec's rules."""
    state = state_of(request)
    data = parse_json_object(await request.body())
    order_id = required_string(data, "orderId")
    external_id = optional_string(data, "externalId", max_length=MAX_EXTERNAL_ID)
    reason = optional_string(data, "reason", max_length=MAX_REASON)
    callback_url = optional_string(data, "callbackUrl")
    amount = parse_amount(data["amount"]) if data.get("amount") is not None else None
    if external_id is not None:
        state.refund_attempts[external_id] += 1
    order = found(state.orders.get(order_id), "order")
    if order_id in state.orders_without_api_refunds:
        raise ApiError(403, "REFUNDS_NOT_ENABLED", NOT_ENABLED)
    if order["status"] != "COMPLETED":
        raise conflict("ORDER_NOT_COMPLETED", f"order is {order['status']}, not COMPLETED")
    order_amount = parse_amount(order["amount"])
    if amount is not None and amount != order_amount:
        raise bad_request(f"only full refunds: amount must equal the order amount {order_amount}")
    if external_id is not None and external_id in state.refund_ids_by_external:
        raise conflict("DUPLICATE_EXTERNAL_ID", "a refund with this externalId already exists")
    if any(r["orderId"] == order_id and r["status"] in BLOCKING for r in state.refunds.values()):
        raise conflict("REFUND_EXISTS", "the order already has an active or completed refund")
    initial, final = outcome_for(external_id)
    if initial != "FAILED":
        state.balances.hold(order["currency"], order_amount, "refund debit")
    stamp = now_iso()
    refund: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "orderId": order_id,
        "orderExternalId": order["externalId"],
        "terminalId": None,
        "merchantId": state.config.merchant_id,
        "status": initial,
        "amount": order["amount"],
        "currency": order["currency"],
        "debitAmount": order["amount"],
        "debitCurrency": order["currency"],
        "debitBasis": "ORDER_AMOUNT",
        "externalId": external_id,
        "reason": reason,
        "callbackUrl": callback_url,
        "statusMessage": None,
        "gatewayRefundId": None,
        "metadata": None,
        "createdAt": stamp,
        "updatedAt": stamp,
        "completedAt": stamp if initial == "FAILED" else None,
    }
    state.refunds[refund["id"]] = refund
    if external_id is not None:
        state.refund_ids_by_external[external_id] = refund["id"]
    if initial != "FAILED" and final is not None:
        target = final
        state.timers.later(state.config.final_delay, lambda: _finish(state, refund, order, target))
    if state.rng.random() < state.faults.lost_response_rate:
        return LostResponse(JSONResponse(refund).body, status_code=201, media_type=JSON)
    return JSONResponse(refund, status_code=201)


def _finish(
    state: SandboxState, refund: dict[str, Any], order: dict[str, Any], status: str
) -> None:
    stamp = now_iso()
    refund.update(status=status, updatedAt=stamp, completedAt=stamp)
    debit = parse_amount(refund["debitAmount"])
    if status == "COMPLETED":
        state.balances.debit(refund["debitCurrency"], debit)
    else:
        state.balances.release(refund["debitCurrency"], debit)
    url = state.callback_url(refund["callbackUrl"], order["callbackUrl"])
    state.webhooks.send(REFUND_UPDATE, url, dict(refund), key=refund["id"], more=False)
    if status == "COMPLETED":
        move_order(state, order, "REFUND")


async def get_refund(request: Request) -> Response:
    """The refund by id, or 404."""
    refund = state_of(request).refunds.get(request.path_params["refund_id"])
    return JSONResponse(found(refund, "refund"))


async def get_refund_by_external_id(request: Request) -> Response:
    """The refund by the merchant's externalId, or 404."""
    state = state_of(request)
    refund_id = state.refund_ids_by_external.get(request.path_params["external_id"])
    return JSONResponse(state.refunds[found(refund_id, "refund")])


ROUTES = [
    Route("/v1/refunds", post_refund, methods=["POST"]),
    Route("/v1/refunds/external/{external_id:path}", get_refund_by_external_id, methods=["GET"]),
    Route("/v1/refunds/{refund_id}", get_refund, methods=["GET"]),
]
