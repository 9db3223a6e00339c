"""What the sync and async clients share: building a request, reading an answer, the retry step.

The token lives only in a SecretStr here and is put on each request as `X-Api-Token`; no error
keeps the request, its headers or an httpx exception (whose `.request` holds the headers).
"""

from __future__ import annotations

import logging
from typing import TypeVar

import httpx
from pydantic import SecretStr, ValidationError

from payflow.api.calls import ApiCall
from payflow.api.errors import (
    AmbiguousError,
    ConnectFailedError,
    PaymentsApiError,
    UnexpectedResponseError,
    error_from_response,
)
from payflow.api.jsonbody import dumps, loads
from payflow.api.retry import RetryPolicy
from payflow.redact import mask_requisites

logger = logging.getLogger("payflow.api")
MASKED_QUERY_PARAMS = ("account",)  # the banks list takes the recipient phone in the query

T = TypeVar("T")

# Parsed URLs kept per path; the cache is emptied when full (one path per externalId lookup).
URL_CACHE_SIZE = 256

# No connection was made, so nothing reached the service.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ProxyError)


class MaskRecipientInHttpxLog(logging.Filter):
    """httpx logs every URL at INFO; mask the phone of `?account=` to its last four characters."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_masked(arg) for arg in record.args)
        return True


def _masked(arg: object) -> object:
    if not isinstance(arg, httpx.URL):
        return arg
    params = arg.params
    for name in MASKED_QUERY_PARAMS:
        if name in params:
            params = params.set(name, mask_requisites(params[name]))
    return arg.copy_with(params=params)


def install_log_masking() -> None:
    """Add the mask to the httpx logger once (idempotent; logging filters are process-wide)."""
    httpx_logger = logging.getLogger("httpx")
    if not any(isinstance(f, MaskRecipientInHttpxLog) for f in httpx_logger.filters):
        httpx_logger.addFilter(MaskRecipientInHttpxLog())


class ClientCore:
    """Configuration and the transport-independent steps of every call."""

    def __init__(
        self,
        token: str | SecretStr,
        *,
        base_url: str,
        timeout: float,
        max_retries: int,
        retry: RetryPolicy | None,
    ) -> None:
        secret = token if isinstance(token, SecretStr) else SecretStr(token)
        if not secret.get_secret_value():
            raise ValueError("an API token is required")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        if not timeout > 0:
            raise ValueError("timeout must be positive")
        self._token = secret
        install_log_masking()
        self.base_url = base_url.rstrip("/")
        self._urls: dict[str, httpx.URL] = {}
        self.timeout = httpx.Timeout(timeout)
        self.retry = retry if retry is not None else RetryPolicy(max_retries=max_retries)

    def __repr__(self) -> str:
        return f"ClientCore(base_url={self.base_url!r})"

    def build(self, http: httpx.Client | httpx.AsyncClient, call: ApiCall[T]) -> httpx.Request:
        """The httpx request for `call`, with the token header and a timeout on every request."""
        headers = {"X-Api-Token": self._token.get_secret_value(), "Accept": "application/json"}
        content = None
        if call.body is not None:
            content = dumps(call.body)
            headers["Content-Type"] = "application/json"
        return http.build_request(
            call.method,
            self._url(call.path),
            params=call.params,
            content=content,
            headers=headers,
            timeout=self.timeout,
        )

    def _url(self, path: str) -> httpx.URL:
        """`base_url + path` parsed once: httpx parses a str URL on every request (its host
        through `ipaddress` each time), and a payout run POSTs to one path. The URL holds no
        query (httpx adds `params` to a copy) and never the token, which goes in a header."""
        url = self._urls.get(path)
        if url is None:
            if len(self._urls) >= URL_CACHE_SIZE:
                self._urls.clear()
            url = self._urls[path] = httpx.URL(self.base_url + path)
        return url

    def read(self, call: ApiCall[T], response: httpx.Response) -> T | PaymentsApiError:
        """The parsed answer, or the error it stands for (returned, so no context is chained)."""
        status = response.status_code
        logger.debug("%s %s -> HTTP %s", call.method, call.name, status)
        if status == 404 and call.if_not_found is not None:
            return call.if_not_found()
        if not 200 <= status < 300:
            return error_from_response(response, call_name=call.name)
        content = response.content
        try:
            body = loads(content) if content.strip() else None
        except ValueError:
            if not call.body_optional:
                return UnexpectedResponseError(f"{call.name}: HTTP {status} with a non-JSON body")
            body = None
        try:
            return call.parse(body)
        except ValidationError as exc:
            # Only locations and kinds: the input values may be personal data.
            where = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['type']}"
                for e in exc.errors()[:5]
            )
            problem = f"{exc.error_count()} problem(s): {where}"
        except ValueError as exc:
            problem = str(exc)
        return UnexpectedResponseError(
            f"{call.name}: HTTP {status} answer not in the documented shape ({problem})"
        )

    def transport_error(self, call: ApiCall[T], exc: httpx.TransportError) -> PaymentsApiError:
        """The client error for a failure below HTTP; only the exception's kind and text kept."""
        kind = type(exc).__name__
        detail = " ".join(str(exc).split())[:120]
        if isinstance(exc, _NOT_SENT):
            return ConnectFailedError(f"{call.name}: could not connect ({kind}: {detail})")
        if isinstance(exc, httpx.UnsupportedProtocol):
            return PaymentsApiError(f"{call.name}: unsupported URL scheme ({detail})")
        return AmbiguousError(
            f"{call.name}: no answer ({kind}: {detail}); the request may have taken effect"
        )

    def retry_delay(self, call: ApiCall[T], error: PaymentsApiError, attempt: int) -> float | None:
        """Seconds to wait before sending `call` again, or None when it must not be retried."""
        if not self.retry._should_retry(call.method, error, attempt):
            return None
        delay = self.retry.delay(error, attempt)
        logger.warning(
            "%s failed (%s), attempt %d of %d; retrying in %.2fs",
            call.name,
            type(error).__name__,
            attempt,
            self.retry.max_retries + 1,
            delay,
        )
        return delay
