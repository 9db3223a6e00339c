"""What every /v1 request passes before its handler: injected faults, then token auth.

/_sandbox routes pass untouched: faults and auth never apply to the inspection routes.
"""

from __future__ import annotations

import asyncio
import hmac
import logging

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from payflow.sandbox.errors import error_response
from payflow.sandbox.state import SandboxState

API_PREFIX = "/v1/"
UNCOMPLETED_RESPONSE_LOG = "ASGI callable returned without completing response."


class ApiGate:
    """ASGI middleware: counts requests in flight (and their peak), then latency, 500/503 and 429
    faults, then the X-Api-Token check."""

    def __init__(self, app: ASGIApp, state: SandboxState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(API_PREFIX):
            await self.app(scope, receive, send)
            return
        state = self.state
        state.requests_in_flight += 1
        state.peak_in_flight = max(state.peak_in_flight, state.requests_in_flight)
        try:
            await self._answer(scope, receive, send)
        finally:
            state.requests_in_flight -= 1

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = await self._fault()
        if refusal is None and not self._authorised(Headers(scope=scope)):
            refusal = error_response(401, "UNAUTHORIZED", "missing or invalid X-Api-Token")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _fault(self) -> Response | None:
        faults, rng = self.state.faults, self.state.rng
        if faults.latency > 0:
            await asyncio.sleep(faults.latency)
        if self.state.failures_left > 0:
            self.state.failures_left -= 1
            return error_response(503, "SERVICE_UNAVAILABLE", "injected fault: try again later")
        if rng.random() < faults.error_rate:
            status = rng.choice((500, 503))
            code = "INTERNAL_ERROR" if status == 500 else "SERVICE_UNAVAILABLE"
            return error_response(status, code, "injected fault: try again later")
        if rng.random() < faults.rate_limit_rate:
            return error_response(
                429,
                "RATE_LIMITED",
                "too many requests",
                {"Retry-After": str(faults.retry_after)},
            )
        return None

    def _authorised(self, headers: Headers) -> bool:
        given = headers.get("x-api-token", "")
        return hmac.compare_digest(given.encode("utf-8"), self.state.config.token.encode("utf-8"))


class LostResponse(Response):
    """Sends the headers and half the body, then stops: uvicorn closes the connection mid-body.

    The client sees the connection drop after the payout was created (httpx raises
    `RemoteProtocolError`: "peer closed connection without sending complete message body").
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        await send(
            {
                "type": "http.response.body",
                "body": self.body[: len(self.body) // 2],
                "more_body": True,
            }
        )


class _HideLostResponseLog(logging.Filter):
    """uvicorn reports a deliberately cut response as an error; the sandbox meant it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != UNCOMPLETED_RESPONSE_LOG


def quiet_lost_response_log() -> None:
    """Install the filter once on uvicorn's error logger."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _HideLostResponseLog) for f in logger.filters):
        logger.addFilter(_HideLostResponseLog())
