"""The signed-webhook receiver: verify, record in the ledger, answer fast.

Its only job is to record. Forward-only status moves and duplicate handling are the ledger's
job (`Ledger.record_statuses`), so a replayed, duplicated or late delivery changes nothing.
Payout events are written many per transaction (`group_commit`), each answered once stored.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from payflow.api.errors import SignatureInvalidError
from payflow.api.signing import verify_signature
from payflow.api.webhooks import parse_payout_webhook
from payflow.ledger import Ledger
from payflow.serving import BodyTooLarge, read_body
from payflow.webhooks.group_commit import GroupRecorder
from payflow.webhooks.refund_events import REFUND_KINDS, record_refund_webhook

logger = logging.getLogger(__name__)

WEBHOOK_PATH = "/webhooks"
PAYOUT_UPDATE = "PAYOUT_UPDATE"
# A payout, refund or order object is a few kilobytes; the receiver is reachable by anyone and
# reads a body before it can check the signature, so anything larger is refused unread.
MAX_BODY_BYTES = 1024 * 1024


def create_receiver_app(ledger: Ledger, token: str | SecretStr) -> Starlette:
    """An ASGI app that records signed PAYOUT_UPDATE webhooks in `ledger`."""
    secret = token if isinstance(token, SecretStr) else SecretStr(token)
    recorder = GroupRecorder(ledger)

    async def receive(request: Request) -> Response:
        try:
            body = await read_body(request, MAX_BODY_BYTES)
        except BodyTooLarge:
            logger.warning("webhook refused: body over %d bytes", MAX_BODY_BYTES)
            return JSONResponse({"error": "body too large"}, status_code=413)
        try:
            verify_signature(body, request.headers.get("x-signature"), secret.get_secret_value())
        except SignatureInvalidError:
            # The sender's address (a named proxy's client, else the peer): who forges them.
            sender = request.client.host if request.client else "?"
            logger.warning("webhook refused: bad or missing X-Signature (from %s)", sender)
            return JSONResponse({"error": "signature invalid"}, status_code=401)
        kind = request.headers.get("x-type", PAYOUT_UPDATE)
        if kind in REFUND_KINDS:
            recorded = await run_in_threadpool(
                record_refund_webhook, ledger, kind, body, request.headers, secret
            )
            return JSONResponse({"recorded": recorded})
        if kind != PAYOUT_UPDATE:
            logger.info("webhook of type %s accepted and ignored", kind[:40])
            return JSONResponse({"recorded": False, "reason": "not a payout event"})
        try:
            event = parse_payout_webhook(body, request.headers, secret.get_secret_value())
        except SignatureInvalidError:
            return JSONResponse({"error": "signature invalid"}, status_code=401)
        except ValueError:
            # Signed by the service but not a payout event we understand: nothing to record.
            logger.warning("signed webhook with an unreadable payout body ignored")
            return JSONResponse({"recorded": False, "reason": "unreadable body"}, status_code=202)
        recorded = await recorder.record(event)
        return JSONResponse({"recorded": recorded})

    async def health(_: Request) -> Response:
        return PlainTextResponse("ok")

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await recorder.close()

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route(WEBHOOK_PATH, receive, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ],
    )
