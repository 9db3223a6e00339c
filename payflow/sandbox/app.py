"""The sandbox ASGI application: /v1 routes behind the gate, /_sandbox inspection routes beside."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from payflow.sandbox import (
    order_fixtures,
    orders,
    platform_moves,
    refunds,
    routes_payouts,
    widget_routes,
)
from payflow.sandbox.config import SandboxConfig
from payflow.sandbox.errors import ApiError, bad_request, error_response
from payflow.sandbox.gate import ApiGate
from payflow.sandbox.state import SandboxState, state_of
from payflow.sandbox.validation import parse_json_object
from payflow.sandbox.widget_requisites import WidgetAccounts

HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


async def get_stats(request: Request) -> Response:
    """Every payout, create attempts, reads and payouts per externalId, balances, webhooks."""
    return JSONResponse(state_of(request).stats())


async def post_faults(request: Request) -> Response:
    """Change fault settings at run time; answers with the settings now in force."""
    changes = parse_json_object(await request.body())
    try:
        faults = state_of(request).set_faults(changes)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return JSONResponse(faults.as_json())


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
    return error_response(exc.status_code, code, str(exc.detail), exc.headers)


async def _unexpected(request: Request, exc: Exception) -> Response:
    return error_response(500, "INTERNAL_ERROR", "internal error in the sandbox")


def create_app(config: SandboxConfig | None = None) -> Starlette:
    """A fresh sandbox with its own state; serve it with uvicorn on one event loop."""
    state = SandboxState(config or SandboxConfig())
    order_fixtures.seed_demo_orders(state)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            state.timers.cancel_all()
            await state.webhooks.close()

    app = Starlette(
        routes=[
            *routes_payouts.ROUTES,
            *orders.ROUTES,
            *refunds.ROUTES,
            Route("/_sandbox/stats", get_stats, methods=["GET"]),
            Route("/_sandbox/faults", post_faults, methods=["POST"]),
            *orders.SANDBOX_ROUTES,
            *platform_moves.ROUTES,
            *order_fixtures.ROUTES,
            *widget_routes.ROUTES,
        ],
        middleware=[Middleware(ApiGate, state=state)],
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
        lifespan=lifespan,
    )
    app.state.sandbox = state
    app.state.widget_accounts = WidgetAccounts()
    return app
