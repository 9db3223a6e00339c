"""Every endpoint of the service described once, as data both clients execute.

An `ApiCall` says what to send (method, escaped path, query, body) and how to read the answer;
`PayoutsClient` and `AsyncPayoutsClient` only differ in how they wait.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from payflow.api.models import (
    Balance,
    Bank,
    Payout,
    PayoutRequest,
    PayoutService,
)
from payflow.api.orders import Card, H2HCode, H2HStatus, Order, OrderRequest
from payflow.api.refunds import Refund, RefundRequest

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_LIST_WRAPPER_KEYS = ("data", "items", "results", "services", "banks", "content")


@dataclass(frozen=True, slots=True)
class ApiCall(Generic[T]):
    """One request and the reading of its answer; `name` is what logs and errors show."""

    name: str
    method: Literal["GET", "POST"]
    path: str
    parse: Callable[[Any], T] = field(repr=False)
    body: Any = field(default=None, repr=False)
    params: Mapping[str, str] | None = field(default=None, repr=False)
    if_not_found: Callable[[], T] | None = field(default=None, repr=False)
    body_optional: bool = False  # a success answer may be empty or not JSON


class UnusablePathSegment(ValueError):
    """A value no path segment can carry safely: empty, `.` or `..` (nothing was sent)."""


def usable_in_path(value: object) -> bool:
    """Whether `value` can be one URL path segment (`segment` would not refuse it)."""
    return isinstance(value, str) and value not in ("", ".", "..")


def segment(value: str, what: str) -> str:
    """One path segment, percent-encoded (RFC 3986): no value can change the route.

    Everything outside the unreserved characters is escaped, `/ ? # %` and spaces included.
    `.` and `..` are refused: RFC 3986 makes `%2E` equal to `.`, so servers and proxies may
    resolve either as a dot segment and reach another resource."""
    if not usable_in_path(value):
        raise UnusablePathSegment(f"{what} {value!r} cannot be used in a URL path")
    return quote(value, safe="")


def _one(model: type[M]) -> Callable[[Any], M]:
    return model.model_validate


def _many(model: type[M]) -> Callable[[Any], list[M]]:
    def parse(body: Any) -> list[M]:
        return [model.model_validate(item) for item in _list_in(body)]

    return parse


def _list_in(body: Any) -> list[Any]:
    # The spec says "JSON array" for banks and just "list" for services: accept a wrapper too.
    if isinstance(body, list):
        return body
    if isinstance(body, dict):
        for key in _LIST_WRAPPER_KEYS:
            if isinstance(body.get(key), list):
                return list(body[key])
    raise ValueError("expected a JSON array")


def _raw(body: Any) -> dict[str, Any] | None:
    return body if isinstance(body, dict) else None


def _none() -> None:
    return None


def create_payout(request: PayoutRequest) -> ApiCall[Payout]:
    """POST /v1/payouts: sent once; see errors.is_ambiguous_for_create."""
    return ApiCall("create_payout", "POST", "/v1/payouts", _one(Payout), body=request.to_body())


def get_payout(payout_id: str) -> ApiCall[Payout]:
    """GET /v1/payouts/{payoutId}."""
    path = f"/v1/payouts/{segment(payout_id, 'payout id')}"
    return ApiCall("get_payout", "GET", path, _one(Payout))


def get_payout_by_external_id(external_id: str) -> ApiCall[Payout]:
    """GET /v1/payouts/external/{externalId}; 404 raises NotFoundError."""
    path = f"/v1/payouts/external/{segment(external_id, 'externalId')}"
    return ApiCall("get_payout_by_external_id", "GET", path, _one(Payout))


def find_payout_by_external_id(external_id: str) -> ApiCall[Payout | None]:
    """As get_payout_by_external_id, with None for 404 (a POST is then safe)."""
    path = f"/v1/payouts/external/{segment(external_id, 'externalId')}"
    return ApiCall("find_payout_by_external_id", "GET", path, _one(Payout), if_not_found=_none)


def list_banks(phone: str) -> ApiCall[list[Bank]]:
    """GET /v1/payouts/banks?account={phone}: banks that can pay this phone by SBP."""
    if not phone.strip():
        raise ValueError("phone must not be empty")
    return ApiCall("list_banks", "GET", "/v1/payouts/banks", _many(Bank), params={"account": phone})


def list_services() -> ApiCall[list[PayoutService]]:
    """GET /v1/payouts/services."""
    return ApiCall("list_services", "GET", "/v1/payouts/services", _many(PayoutService))


def get_balance() -> ApiCall[Balance]:
    """GET /v1/merchants/balance."""
    return ApiCall("get_balance", "GET", "/v1/merchants/balance", _one(Balance))


def create_order(request: OrderRequest) -> ApiCall[Order]:
    """POST /v1/orders (ordinary, wallet, or with card data)."""
    return ApiCall("create_order", "POST", "/v1/orders", _one(Order), body=request.to_body())


def get_order(order_id: str) -> ApiCall[Order]:
    """GET /v1/orders/{orderId}."""
    return ApiCall("get_order", "GET", f"/v1/orders/{segment(order_id, 'order id')}", _one(Order))


def submit_card(order_id: str, card: Card) -> ApiCall[Order]:
    """POST /v1/orders/{orderId}/h2h/card: an order in the answer means the card was accepted."""
    path = f"/v1/orders/{segment(order_id, 'order id')}/h2h/card"
    return ApiCall("submit_card", "POST", path, _one(Order), body=card.to_body())


def get_h2h_status(order_id: str) -> ApiCall[H2HStatus]:
    """GET /v1/orders/{orderId}/h2h/status."""
    path = f"/v1/orders/{segment(order_id, 'order id')}/h2h/status"
    return ApiCall("get_h2h_status", "GET", path, _one(H2HStatus))


def submit_h2h_code(order_id: str, code: str) -> ApiCall[dict[str, Any] | None]:
    """POST /v1/orders/{orderId}/h2h/code; the answer's body is not documented (kept raw)."""
    path = f"/v1/orders/{segment(order_id, 'order id')}/h2h/code"
    body = H2HCode.model_validate({"code": code}).to_body()
    return ApiCall("submit_h2h_code", "POST", path, _raw, body=body, body_optional=True)


def create_refund(request: RefundRequest) -> ApiCall[Refund]:
    """POST /v1/refunds: sent once; a repeated externalId answers 409."""
    return ApiCall("create_refund", "POST", "/v1/refunds", _one(Refund), body=request.to_body())


def get_refund(refund_id: str) -> ApiCall[Refund]:
    """GET /v1/refunds/{refundId}."""
    path = f"/v1/refunds/{segment(refund_id, 'refund id')}"
    return ApiCall("get_refund", "GET", path, _one(Refund))


def get_refund_by_external_id(external_id: str) -> ApiCall[Refund]:
    """GET /v1/refunds/external/{externalId}; 404 raises NotFoundError."""
    path = f"/v1/refunds/external/{segment(external_id, 'externalId')}"
    return ApiCall("get_refund_by_external_id", "GET", path, _one(Refund))


def find_refund_by_external_id(external_id: str) -> ApiCall[Refund | None]:
    """As get_refund_by_external_id, with None for 404 (a POST is then safe)."""
    path = f"/v1/refunds/external/{segment(external_id, 'externalId')}"
    return ApiCall("find_refund_by_external_id", "GET", path, _one(Refund), if_not_found=_none)


def find_order(order_id: str) -> ApiCall[Order | None]:
    """As get_order, with None for 404 (unknown order, or another merchant's)."""
    path = f"/v1/orders/{segment(order_id, 'order id')}"
    return ApiCall("find_order", "GET", path, _one(Order), if_not_found=_none)
