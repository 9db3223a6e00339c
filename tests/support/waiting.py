"""Waiting on a condition instead of sleeping a fixed time: the test goes on as soon as it holds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], *, what: str, timeout: float = 10.0, interval: float = 0.02
) -> T:
    """Call `condition` until it returns something truthy and return that; fail after `timeout`
    (a bound for a broken run, not a speed assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def sandbox_is_idle(stats: dict[str, object]) -> bool:
    """No status move scheduled and no webhook delivery in flight: nothing more will happen."""
    webhooks = stats["webhooks"]
    assert isinstance(webhooks, dict)
    return stats["pendingMoves"] == 0 and webhooks["inFlight"] == 0
