"""The one place that decides whether and when the client sends a request again.

Only GETs are retried, on transient errors and on timeouts or dropped connections (a GET has no
effect to duplicate). POSTs are sent once: their caller resolves ambiguous outcomes (invariant 1).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from payflow.api.errors import (
    AmbiguousError,
    PaymentsApiError,
    RateLimitedError,
    TransientError,
    UnexpectedResponseError,
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter, honouring Retry-After up to `max_retry_after`."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be zero or more")

    def _should_retry(self, method: str, error: PaymentsApiError, attempt: int) -> bool:
        """True when the failed `attempt` (1-based) of a `method` request may be sent again."""
        if method.upper() != "GET" or attempt > self.max_retries:
            return False
        if isinstance(error, RateLimitedError) and error.retry_after is not None:
            # Waiting longer than we are willing to would block the caller; let it decide.
            return error.retry_after <= self.max_retry_after
        return is_retryable_read(error)

    def _jitter(self) -> float:
        """A factor in [0.5, 1.0) that spreads retries of many clients; tests pin it."""
        return 0.5 + random.random() / 2

    def delay(self, error: PaymentsApiError | None, attempt: int) -> float:
        """Seconds to wait after failed `attempt`: Retry-After when given, else backoff."""
        backoff = exponential_backoff(attempt, self.base_delay, self.max_delay) * self._jitter()
        if isinstance(error, RateLimitedError) and error.retry_after is not None:
            return max(min(error.retry_after, self.max_retry_after), backoff)
        return backoff


def exponential_backoff(attempt: int, first: float, ceiling: float) -> float:
    """`first` doubled per attempt after the first (1-based), never above `ceiling`."""
    return min(max(first, ceiling), first * 2.0 ** min(attempt - 1, 64))


def is_retryable_read(error: BaseException) -> bool:
    """True when a read (a GET, or a task made only of GETs) may simply be tried again."""
    if isinstance(error, UnexpectedResponseError):
        return False  # the same answer would come back
    return isinstance(error, TransientError | AmbiguousError)
