"""The synchronous client: executes the calls of `calls.py` over an httpx.Client."""

from __future__ import annotations

import time
from itertools import count
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import SecretStr

from payflow.api import calls
from payflow.api.calls import ApiCall
from payflow.api.core import ClientCore
from payflow.api.errors import PaymentsApiError
from payflow.api.models import Balance, Bank, Payout, PayoutRequest, PayoutService
from payflow.api.orders import Card, H2HStatus, Order, OrderRequest
from payflow.api.refunds import Refund, RefundRequest
from payflow.api.retry import RetryPolicy

T = TypeVar("T")


class PayoutsClient:
    """Blocking client of the payments API; GETs retry transient errors, POSTs are sent once."""

    def __init__(
        self,
        token: str | SecretStr,
        *,
        base_url: str,
        http_client: httpx.Client | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._core = ClientCore(
            token, base_url=base_url, timeout=timeout, max_retries=max_retries, retry=retry
        )
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.Client()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._core.base_url!r})"

    def __enter__(self) -> PayoutsClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP client if this client created it."""
        if self._owns_http:
            self._http.close()

    def execute(self, call: ApiCall[T]) -> T:
        """Send `call`, retrying as `RetryPolicy` allows; raise the mapped PaymentsApiError."""
        for attempt in count(1):
            try:
                return self._send_once(call)
            except PaymentsApiError as error:
                delay = self._core.retry_delay(call, error, attempt)
                if delay is None:
                    raise
            time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send_once(self, call: ApiCall[T]) -> T:
        request = self._core.build(self._http, call)
        try:
            response = self._http.send(request)
        except httpx.TransportError as exc:
            outcome: T | PaymentsApiError = self._core.transport_error(call, exc)
        else:
            outcome = self._core.read(call, response)
        if isinstance(outcome, PaymentsApiError):
            raise outcome
        return outcome

    # One line per endpoint: what to send and how to read it lives in calls.py.

    def create_payout(self, request: PayoutRequest) -> Payout:
        """POST /v1/payouts once; on an error see `errors.is_ambiguous_for_create`."""
        return self.execute(calls.create_payout(request))

    def get_payout(self, payout_id: str) -> Payout:
        """The payout by the service's id."""
        return self.execute(calls.get_payout(payout_id))

    def get_payout_by_external_id(self, external_id: str) -> Payout:
        """The payout by the merchant's externalId; NotFoundError when there is none."""
        return self.execute(calls.get_payout_by_external_id(external_id))

    def find_payout_by_external_id(self, external_id: str) -> Payout | None:
        """The payout by externalId, or None when the service has none."""
        return self.execute(calls.find_payout_by_external_id(external_id))

    def list_banks(self, phone: str) -> list[Bank]:
        """Banks that can receive an SBP payout to `phone`."""
        return self.execute(calls.list_banks(phone))

    def list_services(self) -> list[PayoutService]:
        """Payout services enabled for the merchant."""
        return self.execute(calls.list_services())

    def get_balance(self) -> Balance:
        """The merchant balance."""
        return self.execute(calls.get_balance())

    def create_order(self, request: OrderRequest) -> Order:
        """POST /v1/orders once."""
        return self.execute(calls.create_order(request))

    def get_order(self, order_id: str) -> Order:
        """The order with its current status."""
        return self.execute(calls.get_order(order_id))

    def submit_card(self, order_id: str, card: Card) -> Order:
        """POST the card data of an H2H order once."""
        return self.execute(calls.submit_card(order_id, card))

    def get_h2h_status(self, order_id: str) -> H2HStatus:
        """The H2H card-stage status of an order."""
        return self.execute(calls.get_h2h_status(order_id))

    def submit_h2h_code(self, order_id: str, code: str) -> dict[str, Any] | None:
        """POST the payer's bank SMS code once; the undocumented answer is returned raw."""
        return self.execute(calls.submit_h2h_code(order_id, code))

    def create_refund(self, request: RefundRequest) -> Refund:
        """POST /v1/refunds once."""
        return self.execute(calls.create_refund(request))

    def get_refund(self, refund_id: str) -> Refund:
        """The refund by the service's id."""
        return self.execute(calls.get_refund(refund_id))

    def get_refund_by_external_id(self, external_id: str) -> Refund:
        """The refund by the merchant's externalId; NotFoundError when there is none."""
        return self.execute(calls.get_refund_by_external_id(external_id))

    def find_refund_by_external_id(self, external_id: str) -> Refund | None:
        """The refund by the merchant's externalId, or None when there is none."""
        return self.execute(calls.find_refund_by_external_id(external_id))

    def find_order(self, order_id: str) -> Order | None:
        """The order with its current status, or None when the service does not know it."""
        return self.execute(calls.find_order(order_id))
