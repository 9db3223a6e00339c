"""Failed sign-ins: a growing delay per operator name, a limit per client address.

Each wrong password only cost an argon2 check, with no end to the tries: anyone who could reach
the console could guess a checker's password. A lock-out per name let anyone lock a checker out
by typing her name five times, so a name's failures only slow it down: past a few, each attempt
on that name waits (1 s, 2 s, 4 s... at most `MAX_DELAY_SECONDS` after its last failure) and is
then checked, the right password included. An address past its limit (password spraying: many
names from one place) is refused without any check, except for the names that signed in from it
since the console started: operators behind one address (127.0.0.1, an office's NAT) are not
locked out by a stranger's failures there. The address is the peer's, or the one a trusted
proxy names (see payflow.console.exposure). In memory, like the sessions: a restart forgets.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from payflow.approvals import person_key

FREE_FAILURES_PER_NAME = 3
FIRST_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 30.0
# Higher than a name's free tries: operators behind one proxy or office address share it.
MAX_FAILURES_PER_ADDRESS = 20
WINDOW_SECONDS = 15 * 60.0


@dataclass(frozen=True)
class Verdict:
    """What to do with one attempt: refuse it for `refused_for` seconds (the address is past its
    limit), or check it after waiting `delay` seconds (0: at once)."""

    refused_for: int | None = None
    delay: float = 0.0


class SignInLimits:
    """`verdict(name, address)` before checking a password, `failed(...)` or `succeeded(...)`
    after."""

    def __init__(
        self,
        *,
        free_per_name: int = FREE_FAILURES_PER_NAME,
        first_delay: float = FIRST_DELAY_SECONDS,
        max_delay: float = MAX_DELAY_SECONDS,
        per_address: int = MAX_FAILURES_PER_ADDRESS,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._free = free_per_name
        self._first_delay = first_delay
        self._max_delay = max_delay
        self._per_address = per_address
        self._window = window
        self._clock = clock
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._known: set[tuple[str, str]] = set()  # (name, address) that signed in
        self._lock = threading.Lock()

    def verdict(self, name: str, address: str) -> Verdict:
        """Whether this attempt is refused (the address's limit), or how long it waits first."""
        now = self._clock()
        key = person_key(name)
        with self._lock:
            by_address = self._recent(("address", address), now, keep=False)
            if len(by_address) >= self._per_address and (key, address) not in self._known:
                return Verdict(refused_for=math.ceil(by_address[0] + self._window - now))
            by_name = self._recent(("name", key), now, keep=False)
        return Verdict(delay=max(0.0, self.name_delay(len(by_name)) - (now - _last(by_name))))

    def name_delay(self, failures: int) -> float:
        """Seconds an attempt waits after a name's last failure, given its failures."""
        beyond = failures - self._free
        if beyond < 0:
            return 0.0
        return float(min(self._first_delay * 2**beyond, self._max_delay))

    def name_failures(self, name: str) -> int:
        """The name's failures within the window (for the log line)."""
        with self._lock:
            return len(self._recent(("name", person_key(name)), self._clock(), keep=False))

    def failed(self, name: str, address: str) -> None:
        """Count a wrong name or password against both the name and the address."""
        now = self._clock()
        with self._lock:
            for key in (("name", person_key(name)), ("address", address)):
                self._recent(key, now).append(now)
            # Names tried once and never again would otherwise pile up for as long as it runs.
            for key in [k for k, times in self._failures.items() if not times]:
                del self._failures[key]

    def succeeded(self, name: str, address: str) -> None:
        """The name's failures are forgotten and it may sign in from this address past the
        address's limit (the address's failures stay counted)."""
        key = person_key(name)
        with self._lock:
            self._failures.pop(("name", key), None)
            self._known.add((key, address))

    def _recent(self, key: tuple[str, str], now: float, *, keep: bool = True) -> deque[float]:
        """The key's failures within the window; `keep=False` stores no entry for a new key."""
        times = (
            self._failures.setdefault(key, deque()) if keep else self._failures.get(key, deque())
        )
        while times and times[0] <= now - self._window:
            times.popleft()
        return times


def _last(times: deque[float]) -> float:
    return times[-1] if times else -math.inf
