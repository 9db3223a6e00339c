"""The one-click payout widget served by the sandbox: the page and the calls its script makes.

`GET /payout-widget?payload=&signature=` renders the page; its script calls the JSON routes
below with the same payload and signature, checked again on every call. The page never holds a
token or a secret: only what the link itself carries and what the client typed.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from decimal import Decimal
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox.errors import ApiError
from payflow.sandbox.payouts import create_payout
from payflow.sandbox.state import SandboxState, state_of
from payflow.sandbox.validation import PayoutDraft, parse_json_object
from payflow.sandbox.widget_link import (
    LINK_EXPIRED,
    SIGNATURE_INVALID,
    WidgetLink,
    WidgetLinkError,
    check_link,
)
from payflow.sandbox.widget_requisites import WidgetAccounts, banks, check_requisites

WIDGET_PATH = "/payout-widget"
STATUS_OF_ERROR = {SIGNATURE_INVALID: 403, LINK_EXPIRED: 410}
STATIC = {"widget.js": "text/javascript", "widget.css": "text/css"}
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    # The link in the address bar must not leave in a Referer header.
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def accounts_of(request: Request) -> WidgetAccounts:
    """The widget's stored bank details of the app serving `request`."""
    accounts: WidgetAccounts = request.app.state.widget_accounts
    return accounts


def _check(
    state: SandboxState, payload: Any, signature: Any, *, allow_expired: bool = False
) -> WidgetLink:
    return check_link(
        payload if isinstance(payload, str) else None,
        signature if isinstance(signature, str) else None,
        merchant_id=state.config.merchant_id,
        token=state.config.token,
        now=time.time(),
        allow_expired=allow_expired,
    )


def _payout_of(state: SandboxState, external_id: str) -> dict[str, Any] | None:
    payout_id = state.payout_ids_by_external.get(external_id)
    if payout_id is None:
        return None
    payout = state.payouts[payout_id]
    return {"id": payout["id"], "status": payout["status"]}


CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'"
)


def _page(initial: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    template = resources.files("payflow.sandbox").joinpath("data/widget.html").read_text("utf-8")
    # Inside <script type="application/json"> only "</" could end the element early.
    state_json = json.dumps(initial, ensure_ascii=False).replace("<", "\\u003c")
    body = template.replace("{{state}}", state_json)
    headers = {**PAGE_HEADERS, "Content-Security-Policy": CSP}
    return HTMLResponse(body, status_code=status_code, headers=headers)


async def widget_page(request: Request) -> Response:
    """The widget: the form, the stored account, the payout's state, or the link's error."""
    state = state_of(request)
    query = request.query_params
    try:
        link = _check(state, query.get("payload"), query.get("signature"))
    except WidgetLinkError as exc:
        return _page(
            {"screen": "error", "error": exc.as_json()}, STATUS_OF_ERROR.get(exc.code, 400)
        )
    stored = accounts_of(request).get(link.merchant_id, link.user_id)
    payout = _payout_of(state, link.external_id)
    screen = "status" if payout else ("confirm" if stored else "form")
    return _page(
        {
            "screen": screen,
            "externalId": link.external_id,
            "amount": str(link.amount.quantize(Decimal("0.01"))),
            "account": stored.summary() if stored else None,
            "payout": payout,
            "banks": [{"bik": bik, "name": name} for bik, name in banks()],
        }
    )


def _link_error(exc: WidgetLinkError) -> JSONResponse:
    return JSONResponse({"error": exc.as_json()}, status_code=STATUS_OF_ERROR.get(exc.code, 400))


async def save_requisites(request: Request) -> Response:
    """Store the client's details (first binding or replacement) while the link has no payout."""
    state = state_of(request)
    data = parse_json_object(await request.body())
    try:
        link = _check(state, data.get("payload"), data.get("signature"))
    except WidgetLinkError as exc:
        return _link_error(exc)
    payout = _payout_of(state, link.external_id)
    if payout is not None:
        # The link already paid: its details can no longer change (spec, behaviour 3).
        return JSONResponse({"error": {"code": "PAYOUT_EXISTS"}, "payout": payout}, status_code=409)
    fields = data.get("requisites")
    requisites, errors = check_requisites(
        fields if isinstance(fields, dict) else {}, datetime.now(UTC).date()
    )
    if requisites is None:
        return JSONResponse({"fields": errors}, status_code=400)
    changed = accounts_of(request).save(link.merchant_id, link.user_id, requisites)
    return JSONResponse({"changed": changed, "account": requisites.summary()})


async def create_widget_payout(request: Request) -> Response:
    """Create the link's one payout from the stored details; an existing one is returned."""
    state = state_of(request)
    data = parse_json_object(await request.body())
    try:
        link = _check(state, data.get("payload"), data.get("signature"))
    except WidgetLinkError as exc:
        return _link_error(exc)
    existing = _payout_of(state, link.external_id)
    if existing is not None:
        return JSONResponse({"payout": existing, "created": False})
    stored = accounts_of(request).get(link.merchant_id, link.user_id)
    if stored is None:
        return JSONResponse({"error": {"code": "NO_REQUISITES"}}, status_code=409)
    draft = PayoutDraft(
        amount=link.amount,
        currency="RUB",
        payment_type="BANK_ACCOUNT",
        account={
            "name": stored.full_name,
            "requisites": stored.account,
            "userId": link.user_id,
            "userPhone": stored.phone,
            "bankName": stored.bik,
        },
        service_id=link.service_id,
        external_id=link.external_id,
        callback_url=None,  # the merchant settings address, as for any payout without one
        note=None,
    )
    state.create_attempts[link.external_id] += 1
    try:
        payout = create_payout(state, draft)
    except ApiError:
        # Not created (e.g. the merchant's balance is short): the client may try again later.
        return JSONResponse({"payout": None, "created": False})
    return JSONResponse(
        {"payout": {"id": payout["id"], "status": payout["status"]}, "created": True}
    )


async def payout_status(request: Request) -> Response:
    """The link's payout `{id, status}` or null; an expired but genuine link may still ask."""
    state = state_of(request)
    query = request.query_params
    try:
        link = _check(state, query.get("payload"), query.get("signature"), allow_expired=True)
    except WidgetLinkError as exc:
        return _link_error(exc)
    return JSONResponse({"payout": _payout_of(state, link.external_id)})


async def static_file(request: Request) -> Response:
    """The page's script and style, served by the sandbox itself (no internet needed)."""
    name = request.path_params["name"]
    if name not in STATIC:
        return Response("not found", status_code=404, media_type="text/plain")
    text = resources.files("payflow.sandbox").joinpath(f"data/{name}").read_text("utf-8")
    return Response(text, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})


ROUTES = [
    Route(WIDGET_PATH, widget_page, methods=["GET"]),
    Route(f"{WIDGET_PATH}/requisites", save_requisites, methods=["POST"]),
    Route(f"{WIDGET_PATH}/payout", create_widget_payout, methods=["POST"]),
    Route(f"{WIDGET_PATH}/status", payout_status, methods=["GET"]),
    Route(f"{WIDGET_PATH}/static/{{name}}", static_file, methods=["GET"]),
]
