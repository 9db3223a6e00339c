"""An httpx client for many requests in flight: httpx's API over aiohttp's connection pool.

Shared by the API client and the sandbox's webhook sender (which imports nothing of payflow.api).

Callers build, send and read httpx requests and catch httpx's exceptions; only the wire is
aiohttp's. httpcore 1.0.9 (httpx's own pool) spent about 0.3 ms of the client's CPU on each
request with the interpreter lock held, which bound a reconciliation of 100,000 payouts at 128
in flight to one core; the same GETs through this transport cost about half as much
(bench/bench_fetch.py). aiohttp is installed already, for S3.

What reached the service decides how a failure maps: only a connection that was never made is
`httpx.ConnectError` or `httpx.ConnectTimeout` (nothing sent, safe to send again); anything
after it is a read or protocol error, which the API client treats as an ambiguous outcome.
aiohttp sends a POST once: it retries only idempotent methods on a reused connection that broke.
"""

from __future__ import annotations

import os
import socket
import ssl
from functools import cache

import aiohttp
import httpx
import yarl

KEEPALIVE_SECONDS = 5.0
# aiohttp adds these when a request lacks them; httpx's request always carries its own.
_HTTPX_SETS = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Sends httpx requests through one aiohttp session of at most `max_connections`.

    The session is opened on the first request, inside the event loop that will use it:
    aiohttp binds a session to its loop, as httpcore binds its connections."""

    def __init__(self, max_connections: int) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The answer to `request`, its body read; aiohttp's errors raised as httpx's."""
        try:
            async with self._open().request(
                request.method,
                _address(request.url),
                headers=list(request.headers.multi_items()),
                data=await request.aread() or None,
                timeout=_timeout(request),
                allow_redirects=False,
            ) as answer:
                body = await answer.read()
        except aiohttp.ClientError as exc:
            raise _as_httpx(exc, request) from exc
        except TimeoutError as exc:
            raise httpx.ReadTimeout("timed out", request=request) from exc
        version = answer.version or aiohttp.HttpVersion11
        return httpx.Response(
            answer.status,
            headers=list(answer.raw_headers),
            stream=httpx.ByteStream(body),
            extensions={
                "http_version": f"HTTP/{version.major}.{version.minor}".encode(),
                "reason_phrase": (answer.reason or "").encode(),
            },
        )

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self._max_connections,
                    ssl=_tls_context(),
                    # httpx's default: a connection idle longer is not reused. Servers close
                    # idle ones too (uvicorn after 5 s), and a POST sent on one the server had
                    # just closed is an ambiguous outcome to look up, not an error to retry.
                    keepalive_timeout=KEEPALIVE_SECONDS,
                ),
                # httpx decodes what it asked for (its Accept-Encoding), as it does over httpcore.
                auto_decompress=False,
                skip_auto_headers=_HTTPX_SETS,
                trust_env=False,
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    async def aclose(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()


def _timeout(request: httpx.Request) -> aiohttp.ClientTimeout:
    """httpx's per-request timeouts as aiohttp's: connect and read alike, no overall limit."""
    given = request.extensions.get("timeout", {})
    connect, read, pool = given.get("connect"), given.get("read"), given.get("pool")
    waiting = None if connect is None or pool is None else connect + pool
    return aiohttp.ClientTimeout(total=None, connect=waiting, sock_connect=connect, sock_read=read)


def _address(url: httpx.URL) -> yarl.URL:
    """The URL to send to, as httpx encoded it. Without its user and password: httpcore never
    sent them, where aiohttp would send them as a Basic authorisation."""
    if url.userinfo:
        url = url.copy_with(userinfo=b"")
    return yarl.URL(str(url), encoded=True)


def _as_httpx(exc: aiohttp.ClientError, request: httpx.Request) -> httpx.TransportError:
    """aiohttp's error as the httpx error of the same meaning: was anything sent?"""
    reason = _reason(exc)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(reason, request=request)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return httpx.ConnectError(reason, request=request)
    if isinstance(exc, aiohttp.InvalidURL):
        return httpx.UnsupportedProtocol(reason, request=request)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return httpx.ReadTimeout(reason, request=request)
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return httpx.RemoteProtocolError(reason, request=request)
    if isinstance(exc, aiohttp.ClientResponseError):  # an answer aiohttp could not parse
        return httpx.RemoteProtocolError(reason, request=request)
    return httpx.ReadError(reason, request=request)


def _reason(exc: aiohttp.ClientError) -> str:
    """What went wrong, in the words httpcore used, never the address: aiohttp's own texts
    name the host and port, some the whole URL, and an address may carry credentials."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return str(exc.certificate_error)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return _os_reason(exc.os_error)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return "timed out"
    if isinstance(exc, aiohttp.InvalidURL):
        return "not an http or https URL"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "Server disconnected without sending a response."
    if isinstance(exc, aiohttp.ClientResponseError):
        return exc.message
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the answer's body was cut short or malformed"
    if isinstance(exc, aiohttp.ClientOSError):
        return _os_reason(exc)
    return type(exc).__name__


def _os_reason(error: OSError) -> str:
    """`[Errno 111] Connection refused`: asyncio's own text of a refused connect names the
    address, so the text comes from the error number."""
    if isinstance(error, ssl.SSLError):
        return str(error)
    if isinstance(error, socket.gaierror):
        return f"[Errno {error.errno}] {error.strerror}"
    if error.errno:
        return f"[Errno {error.errno}] {os.strerror(error.errno)}"
    # asyncio's "Multiple exceptions: ..." when each of the host's addresses failed
    return "no address of the host took the connection"


@cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every session: loading the CA file costs about 60 ms."""
    return httpx.create_ssl_context()


def pooled_http_client(max_in_flight: int, timeout: float | None = None) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` for `max_in_flight` requests at once, over aiohttp's pool.

    `AsyncPayoutsClient` and the sandbox's webhook sender build one; whoever passes their own
    closes it. `timeout` is httpx's per-request timeout (None: httpx's default)."""
    transport = AiohttpTransport(max_in_flight)
    if timeout is None:
        return httpx.AsyncClient(transport=transport)
    return httpx.AsyncClient(transport=transport, timeout=timeout)
