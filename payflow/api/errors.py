"""Errors of the payments API client: each class tells the caller what to do next.

    PaymentsApiError            root; never carries the token or the request headers
    ├── TransientError          nothing took effect: safe to send again (GETs are retried)
    │   ├── ServerError         5xx (or 408) answer
    │   ├── RateLimitedError    429 answer; `.retry_after` seconds, or None
    │   └── ConnectFailedError  no connection was made, so nothing was sent
    ├── AmbiguousError          the request may have taken effect: resolve before any retry
    │   └── UnexpectedResponseError  2xx answer the client cannot read
    ├── RejectedError           4xx answer, permanent; `.status_code`, `.message`
    │   ├── AuthError           401 / 403: the token is refused or the feature is not enabled
    │   ├── NotFoundError       404
    │   └── ConflictError       409: e.g. externalId taken, balance too low for a refund
    ├── SignatureInvalidError   a webhook or widget signature does not match
    └── WebhookPayloadError     a signed webhook body that is not the expected event
    Withheld (not a PaymentsApiError): the caller's guard stopped a POST before it was sent

On POST /v1/payouts every error for which `is_ambiguous_for_create` is true needs a lookup by
externalId before any retry (invariant 1 of design.md); the client itself never retries a POST.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from payflow.redact import service_text

if TYPE_CHECKING:
    import httpx

MESSAGE_LIMIT = 300
_MESSAGE_KEYS = (
    "message",
    "detail",
    "error_description",
    "error",
    "errors",
    "description",
    "title",
)


class PaymentsApiError(Exception):
    """Root of every error the client raises; `str()` is one line, safe to log."""

    status_code: int | None = None

    def __init__(self, message: str, *, request_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.request_id = request_id


class TransientError(PaymentsApiError):
    """Nothing took effect; the same request may be sent again after a pause."""


class ServerError(TransientError):
    """The service answered 5xx (on a POST the outcome is still unknown: see the module doc)."""

    def __init__(self, message: str, *, status_code: int, request_id: str | None = None) -> None:
        super().__init__(message, request_id=request_id)
        self.status_code = status_code


class RateLimitedError(TransientError):
    """The service answered 429; wait `retry_after` seconds (None: not given) before sending."""

    status_code = 429

    def __init__(
        self, message: str, *, retry_after: float | None, request_id: str | None = None
    ) -> None:
        super().__init__(message, request_id=request_id)
        self.retry_after = retry_after


class ConnectFailedError(TransientError):
    """No connection could be made (refused, DNS, connect timeout, pool full): nothing was sent."""


class AmbiguousError(PaymentsApiError):
    """The request went out but no readable answer came back: it may have taken effect."""


class UnexpectedResponseError(AmbiguousError):
    """A success status whose body the client cannot read (not JSON, or not the documented one)."""


class RejectedError(PaymentsApiError):
    """A 4xx answer: the service refused the request and will refuse it again as it is."""

    def __init__(self, message: str, *, status_code: int, request_id: str | None = None) -> None:
        super().__init__(message, request_id=request_id)
        self.status_code = status_code


class AuthError(RejectedError):
    """401 or 403: the token is wrong, or the merchant is not enabled for this call."""


class NotFoundError(RejectedError):
    """404: no such object for this merchant."""


class ConflictError(RejectedError):
    """409: the request clashes with existing state (externalId taken, refund exists, balance)."""


class Withheld(Exception):
    """The request was never sent: the caller's `may_send` said no once an in-flight slot was
    free (a stop was asked for, a lease ran out while the request waited for its turn)."""


class SignatureInvalidError(PaymentsApiError):
    """A signature is missing or does not match the body it claims to sign."""


class WebhookPayloadError(PaymentsApiError, ValueError):
    """A correctly signed webhook whose body is not an event the client understands."""


def is_ambiguous_for_create(exc: BaseException) -> bool:
    """True when a failed POST /v1/payouts must be resolved by externalId lookup before a retry.

    Timeouts, dropped or refused connections, 5xx, 429, 409 and unreadable 2xx answers all
    qualify (invariant 1); other 4xx answers are final and say no payout was created.
    """
    return isinstance(exc, TransientError | AmbiguousError | ConflictError)


def error_from_response(response: httpx.Response, *, call_name: str) -> PaymentsApiError:
    """The one mapping from a non-2xx answer to its error class (like stripe's requestor)."""
    status = response.status_code
    request_id = response.headers.get("x-request-id")
    detail = service_message(response)
    message = f"{call_name}: HTTP {status}" + (f": {detail}" if detail else "")
    if status == 429:
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        return RateLimitedError(message, retry_after=retry_after, request_id=request_id)
    if status >= 500 or status == 408:
        return ServerError(message, status_code=status, request_id=request_id)
    if status in (401, 403):
        return AuthError(message, status_code=status, request_id=request_id)
    if status == 404:
        return NotFoundError(message, status_code=status, request_id=request_id)
    if status == 409:
        return ConflictError(message, status_code=status, request_id=request_id)
    if 400 <= status < 500:
        return RejectedError(message, status_code=status, request_id=request_id)
    # 1xx/3xx: the client follows no redirects, so the outcome of the call is unknown.
    return UnexpectedResponseError(message, request_id=request_id)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date; None if absent."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def service_message(response: httpx.Response) -> str:
    """The service's own words from an error body of unknown shape, on one line and truncated,
    with the request's token and anything like requisites masked (an error may echo them)."""
    text = response.text
    try:
        found = _find_message(json.loads(text)) if text.strip() else None
    except ValueError:
        found = None
    try:
        token = response.request.headers.get("X-Api-Token")
    except RuntimeError:  # a response built without its request
        token = None
    return service_text(_one_line(found if found else text), token)


def _find_message(value: Any, depth: int = 0) -> str | None:
    if depth > 4 or value is None:
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):
        parts = [part for part in (_find_message(item, depth + 1) for item in value) if part]
        return "; ".join(parts) or None
    if isinstance(value, dict):
        for key in _MESSAGE_KEYS:
            found = _find_message(value.get(key), depth + 1)
            if found:
                return found
        # FastAPI/pydantic style items: {"loc": [...], "msg": "..."}.
        if isinstance(value.get("msg"), str):
            location = ".".join(str(part) for part in value.get("loc", []) if part != "body")
            return f"{location}: {value['msg']}" if location else str(value["msg"])
    return None


def _one_line(text: str) -> str:
    collapsed = " ".join(text.split())
    if len(collapsed) > MESSAGE_LIMIT:
        return collapsed[: MESSAGE_LIMIT - 1] + "…"
    return collapsed
