"""Orders (hosted page, wallet, card data) and the H2H card flow, kept compact.

An order stays CREATED until `POST /_sandbox/orders/{id}/complete`, a correct H2H SMS code, or
(with card data in the request) the processing delay; a wallet order with a wrong `extraParams`
or missing customer fields is DECLINED after the processing delay.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox.errors import ApiError, bad_request, conflict, found
from payflow.sandbox.state import SandboxState, now_iso, state_of
from payflow.sandbox.validation import (
    MAX_EXTERNAL_ID,
    format_amount,
    optional_string,
    parse_amount,
    parse_json_object,
    required_string,
)

ORDER_UPDATE = "ORDER_UPDATE"
CARD_FIELDS = ("cardholderName", "cardNumber", "cvv", "expiryDate")
FULL_CUSTOMER = (
    "email", "phone", "firstName", "lastName", "birthday",
    "country", "city", "region", "postcode", "address",
)  # fmt: skip
STANDARD = ("country", "email", "firstName", "lastName", "ip")
FULL_BILLING = (
    "email", "phone", "firstName", "lastName", "country", "city", "state", "postcode", "address",
)  # fmt: skip
WALLET_CUSTOMER_FIELDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("walletA-pay", "walletB-pay"), STANDARD),
    **dict.fromkeys(("WALLETAPAY", "WALLETBPAY"), FULL_BILLING),
    **dict.fromkeys(("walletA_pay", "walletB_pay"), ("email",)),
    **dict.fromkeys(("walletApay", "walletBpay"), ("email", "ip")),
}


def _order(state: SandboxState, order_id: str) -> dict[str, Any]:
    return found(state.orders.get(order_id), "order")


def _check_card(card: object) -> None:
    if not isinstance(card, dict):
        raise bad_request("card must be an object")
    for key in CARD_FIELDS:
        required_string(card, key, "card.")


def _wallet_declines(extra_params: str, customer: object) -> bool:
    required = WALLET_CUSTOMER_FIELDS.get(extra_params)
    if required is None or not isinstance(customer, dict):
        return True
    return any(not isinstance(customer.get(key), str) or not customer[key] for key in required)


def move_order(state: SandboxState, order: dict[str, Any], status: str) -> None:
    """Change an order's status and send ORDER_UPDATE; COMPLETED credits the balance."""
    order.update(status=status, updatedAt=now_iso())
    if status == "COMPLETED":
        state.balances.credit(order["currency"], parse_amount(order["amount"]))
    url = state.callback_url(order["callbackUrl"])
    state.webhooks.send(ORDER_UPDATE, url, dict(order), key=order["id"], more=False)


def store_order(
    state: SandboxState,
    *,
    amount: Decimal,
    currency: str,
    base_url: str,
    order_id: str | None = None,
    external_id: str | None = None,
    purpose: str | None = None,
    success_url: str | None = None,
    fail_url: str | None = None,
    callback_url: str | None = None,
    extra_params: str | None = None,
    customer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Create and remember a CREATED order (the one place an order object is built)."""
    order_id = order_id or str(uuid.uuid4())
    stamp = now_iso()
    order: dict[str, Any] = {
        "id": order_id,
        "merchantId": state.config.merchant_id,
        "status": "CREATED",
        "paymentLink": f"{base_url.rstrip('/')}/pay/{order_id}",
        "amount": format_amount(amount),
        "currency": currency,
        "externalId": external_id,
        "purpose": purpose,
        "successUrl": success_url,
        "failUrl": fail_url,
        "callbackUrl": callback_url,
        "extraParams": extra_params,
        "customer": customer,
        "createdAt": stamp,
        "updatedAt": stamp,
    }
    state.orders[order_id] = order
    state.h2h[order_id] = {"isSmsRequired": False, "status": "INITIALIZING"}
    if external_id is not None:
        state.order_ids_by_external[external_id] = order_id
    return order


async def post_order(request: Request) -> Response:
    """Create an order (201) with status CREATED and a paymentLink."""
    state = state_of(request)
    data = parse_json_object(await request.body())
    amount = parse_amount(data.get("amount"))
    currency = required_string(data, "currency")
    external_id = optional_string(data, "externalId", max_length=MAX_EXTERNAL_ID)
    extra_params = optional_string(data, "extraParams")
    customer = data.get("customer")
    if customer is not None and not isinstance(customer, dict):
        raise bad_request("customer must be an object")
    if "card" in data:
        _check_card(data["card"])
        for key in FULL_CUSTOMER:
            required_string(customer or {}, key, "customer.")
    if external_id is not None and external_id in state.order_ids_by_external:
        raise conflict("DUPLICATE_EXTERNAL_ID", "an order with this externalId already exists")
    order = store_order(
        state,
        amount=amount,
        currency=currency,
        base_url=str(request.base_url),
        external_id=external_id,
        purpose=optional_string(data, "purpose"),
        success_url=optional_string(data, "successUrl"),
        fail_url=optional_string(data, "failUrl"),
        callback_url=optional_string(data, "callbackUrl"),
        extra_params=extra_params,
        customer=customer,
    )
    delay = state.config.processing_delay
    if extra_params is not None and _wallet_declines(extra_params, customer):
        state.timers.later(delay, lambda: move_order(state, order, "DECLINED"))
    elif "card" in data:
        state.timers.later(delay, lambda: move_order(state, order, "COMPLETED"))
    return JSONResponse(order, status_code=201)


async def get_order(request: Request) -> Response:
    """The order with its current status, or 404."""
    return JSONResponse(_order(state_of(request), request.path_params["order_id"]))


async def post_h2h_card(request: Request) -> Response:
    """Accept card data for a CREATED order: the H2H session asks for the SMS code."""
    state = state_of(request)
    order = _order(state, request.path_params["order_id"])
    _check_card(parse_json_object(await request.body()))
    session = state.h2h[order["id"]]
    if order["status"] != "CREATED" or session["status"] != "INITIALIZING":
        raise conflict("INVALID_STATE", "card data was already sent or the order is not CREATED")
    session.update(status="PROCESSING", isSmsRequired=True)
    return JSONResponse(order)


async def get_h2h_status(request: Request) -> Response:
    """The H2H status record `{isSmsRequired, status}`."""
    state = state_of(request)
    return JSONResponse(state.h2h[_order(state, request.path_params["order_id"])["id"]])


async def post_h2h_code(request: Request) -> Response:
    """Check the SMS code: right -> SUCCESS (order completes shortly); wrong -> asked again."""
    state = state_of(request)
    order = _order(state, request.path_params["order_id"])
    code = required_string(parse_json_object(await request.body()), "code")
    session = state.h2h[order["id"]]
    if session["status"] != "PROCESSING":
        raise conflict("INVALID_STATE", "no H2H session is waiting for a code")
    if code == state.config.h2h_sms_code:
        session.update(status="SUCCESS", isSmsRequired=False)
        state.timers.later(
            state.config.processing_delay, lambda: move_order(state, order, "COMPLETED")
        )
    return JSONResponse(session)


async def complete_order(request: Request) -> Response:
    """Sandbox only: the payer paid; the order becomes COMPLETED and the balance is credited."""
    state = state_of(request)
    order = _order(state, request.path_params["order_id"])
    if order["status"] != "CREATED":
        raise ApiError(409, "INVALID_STATE", f"order is {order['status']}, not CREATED")
    move_order(state, order, "COMPLETED")
    return JSONResponse(order)


ROUTES = [
    Route("/v1/orders", post_order, methods=["POST"]),
    Route("/v1/orders/{order_id}", get_order, methods=["GET"]),
    Route("/v1/orders/{order_id}/h2h/card", post_h2h_card, methods=["POST"]),
    Route("/v1/orders/{order_id}/h2h/status", get_h2h_status, methods=["GET"]),
    Route("/v1/orders/{order_id}/h2h/code", post_h2h_code, methods=["POST"]),
]
SANDBOX_ROUTES = [
    Route("/_sandbox/orders/{order_id}/complete", complete_order, methods=["POST"]),
]
