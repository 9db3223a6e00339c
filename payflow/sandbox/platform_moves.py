"""Test-only routes outside /v1: move a payout or the balance later, as the platform might.

`POST /_sandbox/payouts/{id}/status` {"status", "statusMessage"?, "amount"?, "currency"?} and
`POST /_sandbox/balances` {"currency", "available"} (a signed change of the available amount).
`POST /_sandbox/settle` applies every pending payout move now (answers {"applied": n}): what a
run that ends its embedded sandbox asks first, so that its report reads the payouts' last word.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox.errors import bad_request, found
from payflow.sandbox.payouts import FINAL, force_amount, force_status
from payflow.sandbox.state import state_of
from payflow.sandbox.validation import parse_json_object

STATUSES = FINAL | {"CREATED", "PROCESSING"}


def _decimal(value: object, name: str) -> Decimal:
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise bad_request(f"{name} must be a decimal number") from None
    if not amount.is_finite():
        raise bad_request(f"{name} must be finite")
    return amount


async def post_payout_status(request: Request) -> Response:
    """Move a payout to another status (and optionally another amount); no webhook."""
    state = state_of(request)
    payout_id = request.path_params["payout_id"]
    payout = found(state.payouts.get(payout_id), "payout")
    data = parse_json_object(await request.body())
    status = data.get("status", payout["status"])
    if status not in STATUSES:
        raise bad_request(f"status must be one of {', '.join(sorted(STATUSES))}")
    message = data.get("statusMessage")
    if "amount" in data or "currency" in data:
        amount = _decimal(data.get("amount", payout["amount"]), "amount")
        force_amount(state, payout_id, amount, str(data.get("currency", payout["currency"])))
    if status != payout["status"] or "statusMessage" in data:
        force_status(state, payout_id, status, message)
    return JSONResponse(state.payouts[payout_id])


async def post_balance(request: Request) -> Response:
    """Add a signed amount to the available balance of a currency (other account activity)."""
    state = state_of(request)
    data = parse_json_object(await request.body())
    currency = data.get("currency")
    if not isinstance(currency, str) or len(currency) != 3:
        raise bad_request("currency must be a 3-letter code")
    state.balances.credit(currency.upper(), _decimal(data.get("available"), "available"))
    return JSONResponse({"balances": state.balances.as_json()})


async def post_settle(request: Request) -> Response:
    """Apply every pending payout move now (a correction due after completion included)."""
    return JSONResponse({"applied": state_of(request).timers.settle()})


ROUTES = [
    Route("/_sandbox/settle", post_settle, methods=["POST"]),
    Route("/_sandbox/payouts/{payout_id}/status", post_payout_status, methods=["POST"]),
    Route("/_sandbox/balances", post_balance, methods=["POST"]),
]
