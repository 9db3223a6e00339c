"""`payflow links serve`: the merchant's own address that answers claim URLs.

A claim opens like this: unknown token -> a clear "not found" page; a payout already exists
for its row -> that payout's state (looked up by externalId first, so a late webhook does not
matter); expired -> a clear page; its batch not approved under its recorded terms (waiting, or
declined) -> a clear page, nothing minted; otherwise a fresh signed widget link (30 minutes) and a
redirect to it. The token, the link and the API token are never logged (no access log here).
"""

from __future__ import annotations

import html
import logging
import secrets
import threading
import uuid
from urllib.parse import urlsplit

import uvicorn
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from payflow.api import PayoutsClient
from payflow.api.errors import PaymentsApiError
from payflow.api.retry import RetryPolicy
from payflow.console.exposure import Exposure
from payflow.ledger import Ledger
from payflow.ledger.states import FINAL_STATUSES, IllegalTransition, RowState, parse_api_status
from payflow.links.approval import links_approval
from payflow.links.minting import mint_link
from payflow.links.records import ClaimLookup
from payflow.links.store import LinkStore
from payflow.serving import BackgroundServer

logger = logging.getLogger(__name__)

NO_LEAK_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
# "the account given for this payout", never "your account": a claim opened before devices were
# recorded (ledger revision 0022) may be shown to another device than the one that gave it.
STATE_TEXT = {
    RowState.CREATED: (
        "Выплата принята",
        "Деньги поступят на счёт, указанный для этой выплаты, обычно в течение нескольких минут.",
    ),
    RowState.PROCESSING: (
        "Выплата принята",
        "Деньги поступят на счёт, указанный для этой выплаты, обычно в течение нескольких минут.",
    ),
    RowState.COMPLETED: (
        "Выплата выполнена",
        "Деньги отправлены на счёт, указанный для этой выплаты.",
    ),
}
NOT_DONE = ("Выплата не выполнена", "Обратитесь к отправителю выплаты.")
# The batch waits for a checker's approval (its claims are written only once it is approved, so
# a recipient meets this only for a claim issued before): nothing is paid yet.
NOT_APPROVED = (
    "Выплата ещё не подтверждена",
    "Отправитель ещё не подтвердил эту выплату. Откройте ссылку позже или обратитесь к "
    "отправителю выплаты.",
)
# A payout the ledger holds as paid that the service does not confirm now: never "paid".
UNCONFIRMED = (
    "Статус выплаты уточняется",
    "Мы не можем сейчас подтвердить выплату. Обратитесь к отправителю выплаты.",
)
# To a device other than the one that opened the claim first: nothing about the payout (whose
# account it went to is the other device's business), only what to do.
ALREADY_USED = (
    "Ссылка уже использована",
    "Эту ссылку уже открыли на другом устройстве, и выплата по ней оформляется там. Если это "
    "были не вы, обратитесь к отправителю выплаты.",
)
# A recipient waits on the page while the claim is answered: a passing 5xx or 429 is retried
# more often and sooner than a run's reads are (2.5 s of backoff at most; a Retry-After of up to 3 s
# honoured), before "try later" is shown. The decision stays `RetryPolicy`'s.
CLAIM_RETRY = RetryPolicy(max_retries=5, base_delay=0.1, max_delay=1.0, max_retry_after=3.0)
# A random value per device, given at the first open; the claim keeps only its SHA-256.
DEVICE_COOKIE = "payflow_claim_device"
DEVICE_COOKIE_SECONDS = 90 * 24 * 3600  # longer than any claim lives
PAGE = """<!doctype html><html lang="ru"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>{title}</title>
<style>body{{margin:0;font:16px/1.5 system-ui,Arial,sans-serif;color:#1f2328;
background:#fff}} main{{max-width:480px;margin:0 auto;padding:32px 16px;text-align:center}}
h1{{font-size:20px}}</style>
</head><body><main><h1>{title}</h1><p>{text}</p></main></body></html>"""


def page(title: str, text: str, status_code: int) -> HTMLResponse:
    """A one-message page in Russian for the recipient."""
    body = PAGE.format(title=html.escape(title), text=html.escape(text))
    return HTMLResponse(body, status_code=status_code, headers=NO_LEAK_HEADERS)


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def claims_lead_elsewhere(links_url: str, port: int) -> bool:
    """True when claim URLs (`PAYFLOW_LINKS_URL`) name this machine on another port than the
    one served: a recipient's claim would then reach no server. A public address (a proxy in
    front) may use any port, so only a loopback one is judged."""
    parts = urlsplit(links_url)
    if parts.hostname not in LOOPBACK_HOSTS:
        return False
    try:
        named = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False  # settings validation names a malformed URL
    return named != port


class MerchantId:
    """The merchant's id from GET /v1/merchants/balance, asked once per server."""

    def __init__(self, client: PayoutsClient) -> None:
        self._client = client
        self._value: str | None = None
        self._lock = threading.Lock()

    def get(self) -> str:
        """The merchantId; PaymentsApiError when the service cannot say or says no UUID."""
        with self._lock:
            if self._value is None:
                merchant_id = self._client.get_balance().merchant_id
                if not merchant_id:
                    raise PaymentsApiError("the balance response has no merchantId")
                try:
                    uuid.UUID(merchant_id)
                except ValueError:
                    # The widget refuses a payload whose merchantId is no UUID (spec), so every
                    # link minted with it would open on an error page: refuse here, once.
                    raise PaymentsApiError(
                        f"the balance response gives merchantId {merchant_id!r}, not a UUID:"
                        " the widget refuses links signed for it"
                    ) from None
                self._value = merchant_id
            return self._value


def create_claims_app(
    store: LinkStore,
    client: PayoutsClient,
    token: SecretStr,
    widget_url: str,
    merchant: MerchantId | None = None,
) -> Starlette:
    """The ASGI app behind claim URLs: `GET /claim/{token}` and `GET /health`; `merchant` is
    the merchantId already asked (by `payflow links serve` at start), else asked at first use."""
    merchant = merchant or MerchantId(client)
    ledger = Ledger(store.engine, clock=store.now)

    def claim(request: Request) -> Response:
        found = store.find_claim(request.path_params["token"])
        if found is None:
            return page(
                "Ссылка не найдена", "Проверьте ссылку или обратитесь к отправителю выплаты.", 404
            )
        device = request.cookies.get(DEVICE_COOKIE) or secrets.token_urlsafe(32)
        if not store.hold_claim(found, device):
            logger.info("claim for externalId %s opened on a second device", found.external_id)
            return page(*ALREADY_USED, 409)
        answer = _answer(found)
        answer.set_cookie(
            DEVICE_COOKIE,
            device,
            max_age=DEVICE_COOKIE_SECONDS,
            path="/claim",
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
        return answer

    def _answer(found: ClaimLookup) -> Response:
        """The page (or widget link) of a claim this device holds."""
        state = found.state
        try:
            # A COMPLETED payout too: the platform may reverse one with no webhook, and the
            # recipient read "paid" while the widget said it was not.
            if (
                state is RowState.VALIDATED
                or state not in FINAL_STATUSES
                or state is RowState.COMPLETED
            ):
                payout = client.find_payout_by_external_id(found.external_id)
                if payout is not None:
                    try:
                        store.record_status(
                            found.external_id, payout.id, payout.status, payout.status_message
                        )
                    except IllegalTransition as exc:
                        # The ledger cannot follow (COMPLETED -> CANCELED): the service's word
                        # is still what the recipient is told.
                        logger.warning("claim: %s", exc)
                    state = parse_api_status(payout.status) or state
                elif state is RowState.COMPLETED:
                    logger.warning(
                        "claim for externalId %s: the service does not know its payout",
                        found.external_id,
                    )
                    return page(*UNCONFIRMED, 200)
            if state is not RowState.VALIDATED:
                title, text = STATE_TEXT.get(state, NOT_DONE)
                return page(title, text, 200)
            if found.expired:
                return page(
                    "Срок действия ссылки истёк",
                    "Выплата по этой ссылке не создана. Попросите у отправителя новую ссылку.",
                    410,
                )
            # Before a link that pays is minted: the batch's approval, from the ledger.
            approval = links_approval(ledger, found.batch_id)
            if not approval.may_pay:
                logger.info(
                    "claim for externalId %s refused: its batch is not approved",
                    found.external_id,
                )
                waits = approval.steps_left > 0
                return page(*(NOT_APPROVED if waits else NOT_DONE), 403)
            link = mint_link(
                found,
                merchant_id=merchant.get(),
                token=token,
                widget_url=widget_url,
                now=store.now(),
            )
        except PaymentsApiError as exc:
            logger.warning(
                "claim for externalId %s not answered: %s", found.external_id, type(exc).__name__
            )
            return page("Сервис временно недоступен", "Попробуйте открыть ссылку позже.", 503)
        store.mark_opened(found)
        logger.info("claim opened: widget link minted for externalId %s", found.external_id)
        return RedirectResponse(link, status_code=303, headers=NO_LEAK_HEADERS)

    def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    return Starlette(
        routes=[
            Route("/claim/{token}", claim, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


def claims_uvicorn_config(
    app: Starlette, host: str, port: int, exposure: Exposure | None = None
) -> uvicorn.Config:
    """uvicorn settings for the claims server: no access log (claim URLs carry tokens); TLS and
    proxy headers as `exposure` says (none: no proxy header is trusted, not even loopback's)."""
    options = (exposure or Exposure(host)).uvicorn_options()
    return uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, **options
    )


class ClaimsServer(BackgroundServer):
    """`with ClaimsServer(store, client, token, widget_url) as server:` serves on `server.url`."""

    thread_name = "payflow-claims"

    def __init__(
        self,
        store: LinkStore,
        client: PayoutsClient,
        token: SecretStr,
        widget_url: str,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        self._app = create_claims_app(store, client, token, widget_url)

    @property
    def url(self) -> str:
        """The base address claim URLs start with."""
        return f"http://{self._host}:{self._port}"

    def _uvicorn_config(self) -> uvicorn.Config:
        return claims_uvicorn_config(self._app, self._host, self._port)
