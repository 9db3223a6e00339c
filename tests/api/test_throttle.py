"""The requests-per-second ceiling, driven by a fake clock: no test waits for real time."""

from __future__ import annotations

import asyncio
import math

import httpx
import pytest
from api_support import FAST_RETRY, PAYOUT_JSON, TOKEN

from payflow.api import AsyncPayoutsClient
from payflow.api.throttle import Throttle


class FakeClock:
    """A clock that only moves when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.starts: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_reservations_are_spaced_exactly():
    clock = FakeClock()
    throttle = Throttle(4, clock=clock)
    assert [throttle.reserve() for _ in range(4)] == [0.0, 0.25, 0.5, 0.75]
    clock.now += 10  # idle time gives no burst credit beyond one request
    assert [throttle.reserve() for _ in range(2)] == [0.0, 0.25]


async def test_no_window_of_one_second_holds_more_than_the_rate():
    clock = FakeClock()
    rate = 7.5
    throttle = Throttle(rate, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def one() -> None:
        delay = throttle.reserve()
        starts.append(clock.now + delay)
        await clock.sleep(0)

    await asyncio.gather(*(one() for _ in range(40)))
    starts.sort()
    for i, start in enumerate(starts):
        in_window = [s for s in starts[i:] if s < start + 1.0]
        assert len(in_window) <= math.ceil(rate)
    assert starts[-1] - starts[0] == pytest.approx(39 / rate)


async def test_acquire_sleeps_only_when_needed():
    clock = FakeClock()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    throttle = Throttle(2, clock=clock, sleep=sleep)
    await throttle.acquire()
    await throttle.acquire()
    await throttle.acquire()
    assert slept == [0.5, 1.0]


def test_rate_must_be_positive():
    with pytest.raises(ValueError):
        Throttle(0)


async def test_client_bounds_requests_in_flight():
    in_flight = 0
    peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.005)
        in_flight -= 1
        return httpx.Response(200, json=PAYOUT_JSON)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with AsyncPayoutsClient(
        TOKEN, base_url="http://api.test", http_client=http, max_in_flight=3, retry=FAST_RETRY
    ) as client:
        await asyncio.gather(*(client.get_payout(f"p-{i}") for i in range(20)))
    await http.aclose()
    assert peak == 3


async def test_client_passes_every_request_through_the_throttle():
    clock = FakeClock()
    starts: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        starts.append(clock.now)
        return httpx.Response(200, json=PAYOUT_JSON)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    throttle = Throttle(10, clock=clock, sleep=clock.sleep)
    async with AsyncPayoutsClient(
        TOKEN, base_url="http://api.test", http_client=http, throttle=throttle
    ) as client:
        for i in range(5):
            await client.get_payout(f"p-{i}")
    await http.aclose()
    assert starts == pytest.approx([1000.0, 1000.1, 1000.2, 1000.3, 1000.4])
