"""HTTP handlers of /v1/payouts, the services list, the banks list and the balance."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox import catalogue
from payflow.sandbox.errors import bad_request, found
from payflow.sandbox.gate import LostResponse
from payflow.sandbox.payouts import create_payout
from payflow.sandbox.state import state_of
from payflow.sandbox.validation import parse_json_object, validate_payout_request

CREATED = 201


async def post_payout(request: Request) -> Response:
    """Create a payout (201), or 400/409; may lose the response after creating (fault)."""
    state = state_of(request)
    data = parse_json_object(await request.body())
    external_id = data.get("externalId")
    if isinstance(external_id, str):
        state.create_attempts[external_id] += 1
    payout = create_payout(state, validate_payout_request(data))
    if state.rng.random() < state.faults.lost_response_rate:
        return LostResponse(
            JSONResponse(payout).body, status_code=CREATED, media_type="application/json"
        )
    return JSONResponse(payout, status_code=CREATED)


async def get_payout(request: Request) -> Response:
    """The payout by its id, or 404."""
    state = state_of(request)
    payout_id = request.path_params["payout_id"]
    state.payout_reads[payout_id] += 1
    return JSONResponse(found(state.payouts.get(payout_id), "payout"))


async def get_payout_by_external_id(request: Request) -> Response:
    """The payout by the merchant's externalId, or 404."""
    state = state_of(request)
    payout_id = state.payout_ids_by_external.get(request.path_params["external_id"])
    return JSONResponse(state.payouts[found(payout_id, "payout")])


async def list_banks(request: Request) -> Response:
    """The SBP banks for a phone (`?account=`); phones ending in 0000 have none."""
    phone = request.query_params.get("account", "").strip()
    if not phone:
        raise bad_request("query parameter account (recipient phone) is required")
    state_of(request).bank_lookups[phone] += 1
    return JSONResponse(catalogue.banks_for_phone(phone))


async def list_services(request: Request) -> Response:
    """The payout services enabled for the merchant."""
    return JSONResponse([service.as_json() for service in catalogue.SERVICES])


async def get_balance(request: Request) -> Response:
    """`{"merchantId", "balances": [{"currency", "available", "held"}]}`."""
    state = state_of(request)
    state.balance_reads += 1
    return JSONResponse(
        {"merchantId": state.config.merchant_id, "balances": state.balances.as_json()}
    )


ROUTES = [
    Route("/v1/payouts", post_payout, methods=["POST"]),
    Route("/v1/payouts/banks", list_banks, methods=["GET"]),
    Route("/v1/payouts/services", list_services, methods=["GET"]),
    Route("/v1/payouts/external/{external_id:path}", get_payout_by_external_id, methods=["GET"]),
    Route("/v1/payouts/{payout_id}", get_payout, methods=["GET"]),
    Route("/v1/merchants/balance", get_balance, methods=["GET"]),
]
