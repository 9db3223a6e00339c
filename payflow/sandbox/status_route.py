"""POST /_sandbox/payouts/{id}/status: the platform's manual correction of a payout, on demand.

Minimal version for the rerun tests (the reconciliation helper owns the full one): sets status
and statusMessage without a webhook, as the spec says a correction sends none.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox.errors import bad_request, found
from payflow.sandbox.payouts import FINAL
from payflow.sandbox.state import now_iso, state_of
from payflow.sandbox.validation import parse_json_object


async def post_payout_status(request: Request) -> Response:
    """Move a final payout to another final status (body `{"status", "statusMessage"?}`)."""
    state = state_of(request)
    payout = found(state.payouts.get(request.path_params["payout_id"]), "payout")
    data = parse_json_object(await request.body())
    status = str(data.get("status", "")).upper()
    if status not in FINAL or payout["status"] not in FINAL:
        raise bad_request("only a final payout moves, and only to a final status")
    payout.update(status=status, statusMessage=data.get("statusMessage"), updatedAt=now_iso())
    return JSONResponse(payout)


ROUTES = [Route("/_sandbox/payouts/{payout_id}/status", post_payout_status, methods=["POST"])]
