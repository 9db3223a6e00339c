"""A precise requests-per-second ceiling: request starts are spaced at least 1/rate apart.

Each caller reserves the next free start slot without awaiting, so concurrent tasks on one event
loop never share a slot; in any one-second window at most `ceil(rate)` requests start. The
clock and the sleep are injectable so tests run without waiting.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class Throttle:
    """Spaces request starts `1 / max_per_second` seconds apart (a token bucket of size one)."""

    def __init__(
        self,
        max_per_second: float,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if not max_per_second > 0:
            raise ValueError("max_requests_per_second must be positive")
        self.interval = 1.0 / max_per_second
        self._clock = clock
        self._sleep = sleep
        self._next_free: float | None = None

    def __repr__(self) -> str:
        return f"Throttle(max_per_second={1.0 / self.interval:g})"

    def reserve(self) -> float:
        """Take the next start slot; returns how many seconds to wait until it."""
        now = self._clock()
        slot = now if self._next_free is None else max(now, self._next_free)
        self._next_free = slot + self.interval
        return slot - now

    async def acquire(self) -> None:
        """Wait until this caller may start its request."""
        delay = self.reserve()
        if delay > 0:
            await self._sleep(delay)
