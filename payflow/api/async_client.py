"""The asynchronous client: executes the calls of `calls.py` with bounded concurrency and rate.

`max_in_flight` bounds requests in flight (an asyncio.Semaphore); `max_requests_per_second`
spaces request starts (see throttle.py). Both apply to every attempt, retries included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from itertools import count
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import SecretStr

from payflow.api import calls
from payflow.api.calls import ApiCall
from payflow.api.core import ClientCore
from payflow.api.errors import PaymentsApiError, Withheld
from payflow.api.models import Balance, Bank, Payout, PayoutRequest, PayoutService
from payflow.api.orders import Card, H2HStatus, Order, OrderRequest
from payflow.api.refunds import Refund, RefundRequest
from payflow.api.retry import RetryPolicy
from payflow.api.throttle import Throttle
from payflow.http_pools import AiohttpTransport

T = TypeVar("T")

DEFAULT_MAX_CONNECTIONS = 100
# httpx's own logger, for the line `AsyncClient.send` would have logged (`_exchange`).
_HTTPX_LOG = logging.getLogger("httpx")


class AsyncPayoutsClient:
    """Async client of the payments API; GETs retry transient errors, POSTs are sent once."""

    def __init__(
        self,
        token: str | SecretStr,
        *,
        base_url: str,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_in_flight: int | None = None,
        max_requests_per_second: float | None = None,
        retry: RetryPolicy | None = None,
        throttle: Throttle | None = None,
    ) -> None:
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self._core = ClientCore(
            token, base_url=base_url, timeout=timeout, max_retries=max_retries, retry=retry
        )
        self._slots = asyncio.Semaphore(max_in_flight) if max_in_flight is not None else None
        if throttle is None and max_requests_per_second is not None:
            throttle = Throttle(max_requests_per_second)
        self._throttle = throttle
        self._owns_http = http_client is None
        # The transport of a client built here, which `_exchange` sends to directly.
        self._transport: AiohttpTransport | None = None
        if http_client is None:
            # Enough connections that the semaphore, not the pool, is what waits; aiohttp's
            # pool under httpx's API costs less CPU a request than httpcore's (http_pools.py).
            self._transport = AiohttpTransport(max_in_flight or DEFAULT_MAX_CONNECTIONS)
            http_client = httpx.AsyncClient(transport=self._transport)
        self._http = http_client

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._core.base_url!r})"

    async def __aenter__(self) -> AsyncPayoutsClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this client created it."""
        if self._owns_http:
            await self._http.aclose()

    async def execute(self, call: ApiCall[T], may_send: Callable[[], bool] | None = None) -> T:
        """Send `call`, retrying as `RetryPolicy` allows; raise the mapped PaymentsApiError.
        `may_send` is asked once the request has its in-flight slot: False raises `Withheld`."""
        for attempt in count(1):
            try:
                return await self._send_once(call, may_send)
            except PaymentsApiError as error:
                delay = self._core.retry_delay(call, error, attempt)
                if delay is None:
                    raise
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _send_once(self, call: ApiCall[T], may_send: Callable[[], bool] | None) -> T:
        request = self._core.build(self._http, call)
        async with self._slots if self._slots is not None else contextlib.nullcontext():
            if self._throttle is not None:
                await self._throttle.acquire()
            # Asked here, not before the wait: a chunk's rows all queue for a slot at once, so
            # a stop checked before queueing let every queued POST go out after it.
            if may_send is not None and not may_send():
                raise Withheld(call.name)
            try:
                response = await self._exchange(request)
            except httpx.TransportError as exc:
                outcome: T | PaymentsApiError = self._core.transport_error(call, exc)
            else:
                outcome = self._core.read(call, response)
        if isinstance(outcome, PaymentsApiError):
            raise outcome
        return outcome

    async def _exchange(self, request: httpx.Request) -> httpx.Response:
        """The answer to `request`, its body read.

        A client built here hands the request straight to its own transport: what
        `AsyncClient.send` adds on the way (cookies, auth, redirects, event hooks) is nothing
        this client sets or reads, and cost about a sixth of each request's CPU (a payout run
        sends one per row). Its log line is kept, on httpx's logger with its masking filter.
        A client handed in is used as it is."""
        if self._transport is None:
            return await self._http.send(request)
        response = await self._transport.handle_async_request(request)
        response.request = request
        try:
            await response.aread()
        finally:
            await response.aclose()
        if _HTTPX_LOG.isEnabledFor(logging.INFO):
            _HTTPX_LOG.info(
                'HTTP Request: %s %s "%s %d %s"',
                request.method,
                request.url,
                response.http_version,
                response.status_code,
                response.reason_phrase,
            )
        return response

    # One line per endpoint: what to send and how to read it lives in calls.py.

    async def create_payout(
        self, request: PayoutRequest, may_send: Callable[[], bool] | None = None
    ) -> Payout:
        """POST /v1/payouts once; on an error see `errors.is_ambiguous_for_create`."""
        return await self.execute(calls.create_payout(request), may_send)

    async def get_payout(self, payout_id: str) -> Payout:
        """The payout by the service's id."""
        return await self.execute(calls.get_payout(payout_id))

    async def get_payout_by_external_id(self, external_id: str) -> Payout:
        """The payout by the merchant's externalId; NotFoundError when there is none."""
        return await self.execute(calls.get_payout_by_external_id(external_id))

    async def find_payout_by_external_id(self, external_id: str) -> Payout | None:
        """The payout by externalId, or None when the service has none."""
        return await self.execute(calls.find_payout_by_external_id(external_id))

    async def list_banks(self, phone: str) -> list[Bank]:
        """Banks that can receive an SBP payout to `phone`."""
        return await self.execute(calls.list_banks(phone))

    async def list_services(self) -> list[PayoutService]:
        """Payout services enabled for the merchant."""
        return await self.execute(calls.list_services())

    async def get_balance(self) -> Balance:
        """The merchant balance."""
        return await self.execute(calls.get_balance())

    async def create_order(self, request: OrderRequest) -> Order:
        """POST /v1/orders once."""
        return await self.execute(calls.create_order(request))

    async def get_order(self, order_id: str) -> Order:
        """The order with its current status."""
        return await self.execute(calls.get_order(order_id))

    async def submit_card(self, order_id: str, card: Card) -> Order:
        """POST the card data of an H2H order once."""
        return await self.execute(calls.submit_card(order_id, card))

    async def get_h2h_status(self, order_id: str) -> H2HStatus:
        """The H2H card-stage status of an order."""
        return await self.execute(calls.get_h2h_status(order_id))

    async def submit_h2h_code(self, order_id: str, code: str) -> dict[str, Any] | None:
        """POST the payer's bank SMS code once; the undocumented answer is returned raw."""
        return await self.execute(calls.submit_h2h_code(order_id, code))

    async def create_refund(
        self, request: RefundRequest, may_send: Callable[[], bool] | None = None
    ) -> Refund:
        """POST /v1/refunds once."""
        return await self.execute(calls.create_refund(request), may_send)

    async def get_refund(self, refund_id: str) -> Refund:
        """The refund by the service's id."""
        return await self.execute(calls.get_refund(refund_id))

    async def get_refund_by_external_id(self, external_id: str) -> Refund:
        """The refund by the merchant's externalId; NotFoundError when there is none."""
        return await self.execute(calls.get_refund_by_external_id(external_id))

    async def find_refund_by_external_id(self, external_id: str) -> Refund | None:
        """The refund by the merchant's externalId, or None when there is none."""
        return await self.execute(calls.find_refund_by_external_id(external_id))

    async def find_order(self, order_id: str) -> Order | None:
        """The order with its current status, or None when the service does not know it."""
        return await self.execute(calls.find_order(order_id))
