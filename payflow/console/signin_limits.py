"""Failed sign-ins counted per operator name and per client address, in a sliding window.

Each wrong password only cost an argon2 check (about half a second here), with no end to the
tries: anyone who could reach the console could guess a checker's password and approve batches.
Past the limit a name (or an address) is refused without its password being checked, the right
one included, until its oldest failure in the window is old enough; the other names and
addresses sign in as before. In memory, like the sessions: a restart forgets the count.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

from payflow.approvals import person_key

MAX_FAILURES_PER_NAME = 5
# Higher than a name's: operators behind one proxy or office address share it.
MAX_FAILURES_PER_ADDRESS = 20
WINDOW_SECONDS = 15 * 60.0


class SignInLimits:
    """`wait(name, address)` before checking a password, `failed(...)` after a wrong one."""

    def __init__(
        self,
        *,
        per_name: int = MAX_FAILURES_PER_NAME,
        per_address: int = MAX_FAILURES_PER_ADDRESS,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = {"name": per_name, "address": per_address}
        self._window = window
        self._clock = clock
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def wait(self, name: str, address: str) -> int | None:
        """Whole seconds until this name and address may try again, or None: they may now."""
        now = self._clock()
        with self._lock:
            waits = [
                times[0] + self._window - now
                for key in self._keys(name, address)
                if len(times := self._recent(key, now, keep=False)) >= self._limits[key[0]]
            ]
        return math.ceil(max(waits)) if waits else None

    def failed(self, name: str, address: str) -> None:
        """Count a wrong name or password against both the name and the address."""
        now = self._clock()
        with self._lock:
            for key in self._keys(name, address):
                self._recent(key, now).append(now)
            # Names tried once and never again would otherwise pile up for as long as it runs.
            for key in [k for k, times in self._failures.items() if not times]:
                del self._failures[key]

    def succeeded(self, name: str) -> None:
        """The name's earlier failures are forgotten (the address's stay counted)."""
        with self._lock:
            self._failures.pop(("name", person_key(name)), None)

    def _keys(self, name: str, address: str) -> tuple[tuple[str, str], tuple[str, str]]:
        # "Carl" and "carl " are one operator to the approval rules, and one here.
        return ("name", person_key(name)), ("address", address)

    def _recent(self, key: tuple[str, str], now: float, *, keep: bool = True) -> deque[float]:
        """The key's failures within the window; `keep=False` stores no entry for a new key."""
        times = (
            self._failures.setdefault(key, deque()) if keep else self._failures.get(key, deque())
        )
        while times and times[0] <= now - self._window:
            times.popleft()
        return times
