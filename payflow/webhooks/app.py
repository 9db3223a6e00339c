"""The signed-webhook receiver: verify, record in the ledger, answer fast.

Its only job is to record. Forward-only status moves and duplicate handling are the ledger's
job (`Ledger.record_status`), so a replayed, duplicated or late delivery changes nothing.
"""

from __future__ import annotations

import logging

from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from payflow.api.errors import SignatureInvalidError
from payflow.api.signing import verify_signature
from payflow.api.webhooks import PayoutEvent, parse_payout_webhook
from payflow.ledger import EventSource, IllegalTransition, Ledger, LedgerError, UnknownPayout
from payflow.links.store import record_link_event
from payflow.webhooks.refund_events import REFUND_KINDS, record_refund_webhook

logger = logging.getLogger(__name__)

WEBHOOK_PATH = "/webhooks"
PAYOUT_UPDATE = "PAYOUT_UPDATE"


def create_receiver_app(ledger: Ledger, token: str | SecretStr) -> Starlette:
    """An ASGI app that records signed PAYOUT_UPDATE webhooks in `ledger`."""
    secret = token if isinstance(token, SecretStr) else SecretStr(token)

    async def receive(request: Request) -> Response:
        body = await request.body()
        try:
            verify_signature(body, request.headers.get("x-signature"), secret.get_secret_value())
        except SignatureInvalidError:
            logger.warning("webhook refused: bad or missing X-Signature")
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
        recorded = await run_in_threadpool(_record, ledger, event)
        return JSONResponse({"recorded": recorded})

    async def health(_: Request) -> Response:
        return PlainTextResponse("ok")

    return Starlette(
        routes=[
            Route(WEBHOOK_PATH, receive, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


def _record(ledger: Ledger, event: PayoutEvent) -> bool:
    """Record one event forward only; False when nothing moved or the payout is not ours."""
    try:
        return ledger.record_status(
            external_id=event.external_id,
            payout_id=event.payout_id,
            status=event.status,
            status_message=event.status_message,
            source=EventSource.WEBHOOK,
        )
    except UnknownPayout:
        if event.external_id and record_link_event(ledger, event):
            return True  # a payout a recipient created through a payout link
        # Another merchant system's payout, or one this ledger never sent: nothing to record.
        logger.info("webhook for payout %s not in this ledger; ignored", event.payout_id)
        return False
    except (IllegalTransition, LedgerError) as exc:
        logger.error("webhook not recorded: %s", exc)
        return False
