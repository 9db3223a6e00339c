"""An httpx client for many requests in flight: the connections split over small pools.

Shared by the API client and the sandbox's webhook sender (which imports nothing of payflow.api).

httpcore 1.0.9's pool re-checks every connection against every other one each time a request
starts or ends (`_assign_requests_to_connections`), so its CPU cost per request grows with the
square of the pool size. Measured here with 32 in flight against the sandbox: about 13 ms of
client CPU per payout with one pool of 32, about 2 ms with eight pools of 4. Each request goes
to the pool with the fewest requests in flight; the pools' limits still bound the connections.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx

CONNECTIONS_PER_POOL = 4


class ShardedTransport(httpx.AsyncBaseTransport):
    """Dispatches each request to the least busy of several small connection pools."""

    def __init__(self, max_connections: int, per_pool: int = CONNECTIONS_PER_POOL) -> None:
        if max_connections < 1 or per_pool < 1:
            raise ValueError("max_connections and per_pool must be at least 1")
        count = -(-max_connections // per_pool)
        limits = httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool)
        tls = _tls_context()
        self._pools = [httpx.AsyncHTTPTransport(limits=limits, verify=tls) for _ in range(count)]
        self._busy = [0] * count

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send through the pool with the fewest requests waiting for their answer."""
        index = min(range(len(self._pools)), key=self._busy.__getitem__)
        self._busy[index] += 1
        try:
            return await self._pools[index].handle_async_request(request)
        finally:
            self._busy[index] -= 1

    async def aclose(self) -> None:
        """Close every pool."""
        for pool in self._pools:
            await pool.aclose()


@cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every pool: loading the CA file costs about 60 ms, and
    each pool would otherwise load its own (1.4 s for 32 in flight)."""
    return httpx.create_ssl_context()


def pooled_http_client(max_in_flight: int, timeout: float | None = None) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` for `max_in_flight` requests at once, over small pools.

    `AsyncPayoutsClient` and the sandbox's webhook sender build one; whoever passes their own
    closes it. `timeout` is httpx's per-request timeout (None: httpx's default)."""
    transport = ShardedTransport(max_in_flight)
    if timeout is None:
        return httpx.AsyncClient(transport=transport)
    return httpx.AsyncClient(transport=transport, timeout=timeout)
