"""Paid orders for refund tests and demos: fixed demo orders, and COMPLETED orders in bulk.

Demo orders (`data/demo_orders.json`) exist from start-up so that `data/refunds_sample.csv` can
run against the embedded sandbox; they count as paid before the sandbox started, so they do not
add to the configured balance. Orders made by `POST /_sandbox/orders/bulk` are paid now: each
credits the balance, as a payer's payment would. An order made with `"apiRefunds": false` stands
for a payment method without API refunds: POST /v1/refunds answers 403 for it.
"""

from __future__ import annotations

import json
from decimal import Decimal
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox.errors import bad_request
from payflow.sandbox.orders import store_order
from payflow.sandbox.state import SandboxState, state_of
from payflow.sandbox.validation import parse_amount, parse_json_object, required_string

MAX_BULK = 100_000
DEMO_BASE_URL = "http://sandbox.invalid/"


def seed_demo_orders(state: SandboxState) -> None:
    """Add the fixed demo orders (ids listed in docs/sandbox.md)."""
    text = resources.files("payflow.sandbox").joinpath("data/demo_orders.json").read_text("utf-8")
    demo: list[dict[str, Any]] = json.loads(text)
    for item in demo:
        order = store_order(
            state,
            order_id=item["id"],
            amount=Decimal(item["amount"]),
            currency=item["currency"],
            base_url=DEMO_BASE_URL,
            purpose="demo order",
        )
        order["status"] = item["status"]
        if item.get("apiRefunds") is False:
            state.orders_without_api_refunds.add(order["id"])


async def post_bulk_orders(request: Request) -> Response:
    """`{"count", "amount", "currency", "apiRefunds"?, "callbackUrl"?}` -> 201 `{"ids": [...]}`:
    COMPLETED orders, the balance credited with each (no ORDER_UPDATE is sent for them)."""
    state = state_of(request)
    data = parse_json_object(await request.body())
    count = data.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_BULK:
        raise bad_request(f"count must be a whole number from 1 to {MAX_BULK}")
    amount = parse_amount(data.get("amount"))
    currency = required_string(data, "currency").upper()
    api_refunds = data.get("apiRefunds", True)
    if not isinstance(api_refunds, bool):
        raise bad_request("apiRefunds must be true or false")
    callback_url = data.get("callbackUrl")
    if callback_url is not None and not isinstance(callback_url, str):
        raise bad_request("callbackUrl must be a string")
    ids: list[str] = []
    for _ in range(count):
        order = store_order(
            state,
            amount=amount,
            currency=currency,
            base_url=str(request.base_url),
            callback_url=callback_url,
            purpose="bulk test order",
        )
        order["status"] = "COMPLETED"
        state.balances.credit(currency, amount)
        if not api_refunds:
            state.orders_without_api_refunds.add(order["id"])
        ids.append(order["id"])
    return JSONResponse({"ids": ids}, status_code=201)


ROUTES = [Route("/_sandbox/orders/bulk", post_bulk_orders, methods=["POST"])]
