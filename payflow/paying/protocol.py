"""The exactly-once decision for anything the service creates under our externalId.

Payouts and refunds share it (invariant 1 of ../shared/design.md): the row is already marked
SUBMITTING; POST once; on a timeout, dropped connection, 5xx, 429 or 409 look the object up by
externalId before any retry: found -> adopt it when it matches, CONFLICT when it does not; not
found -> sending again is safe. Other 4xx answers are final. This module only decides; the
caller records the decision in the ledger.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from payflow.api.errors import (
    AuthError,
    ConflictError,
    PaymentsApiError,
    RejectedError,
    Withheld,
    is_ambiguous_for_create,
)
from payflow.api.retry import RetryPolicy
from payflow.stopping import STOP

logger = logging.getLogger(__name__)

T = TypeVar("T")
# The client's retry policy decides the wait before the lookup that follows an ambiguous POST.
CREATE_RETRY = RetryPolicy(base_delay=0.2, max_delay=10.0, max_retry_after=60.0)


@dataclass(frozen=True, slots=True)
class CreateOps(Generic[T]):
    """How to create, find and compare one kind of object for one row."""

    external_id: str
    create: Callable[[Callable[[], bool]], Awaitable[T]]  # given `may_send`, asked at send time
    find: Callable[[], Awaitable[T | None]]
    differences: Callable[[T], list[str]]  # field names only, never values
    # 409 whose lookup finds nothing: True when it is the service's final word about this row
    # (refunds: the order is not refundable), False when sending again may succeed (payouts).
    conflict_is_final: bool = False


@dataclass(frozen=True, slots=True)
class Created(Generic[T]):
    """The object exists exactly once: created by our POST, or adopted after a lookup."""

    obj: T
    adopted: bool


@dataclass(frozen=True, slots=True)
class Conflicting:
    """The externalId exists at the service with other content: never sent again."""

    differences: list[str]


@dataclass(frozen=True, slots=True)
class Refused:
    """The service refused the request (a 4xx, 403 included): final for this row."""

    message: str
    status_code: int | None = None


@dataclass(frozen=True, slots=True)
class Unresolved:
    """Whether the object exists is unknown (lookup failed, or the lease ran out)."""


@dataclass(frozen=True, slots=True)
class Deferred:
    """Every lookup said "not found": nothing exists, so the row may be sent later. `reason`:
    what the service last answered to the POST (a balance it says is too low, say)."""

    reason: str | None = None


@dataclass(slots=True)
class StopSignal:
    """Shared by the rows of one chunk: a refused token stops every row's next POST."""

    auth_error: AuthError | None = field(default=None)


Decision = Created[T] | Conflicting | Refused | Unresolved | Deferred


async def resolve(ops: CreateOps[T]) -> Decision[T] | None:
    """Look the row up by externalId; None means it does not exist and a POST is safe."""
    try:
        found = await ops.find()
    except PaymentsApiError as exc:
        logger.warning(
            "lookup of %s failed (%s); left SUBMITTING", ops.external_id, type(exc).__name__
        )
        return Unresolved()
    if found is None:
        return None
    differences = ops.differences(found)
    if differences:
        return Conflicting(differences)
    return Created(found, adopted=True)


async def create_exactly_once(
    ops: CreateOps[T],
    *,
    needs_resolution: bool,
    max_attempts: int,
    stop: StopSignal,
    lease_left: Callable[[], bool],
) -> Decision[T]:
    """Run the protocol for one SUBMITTING row and say what became of it."""
    if needs_resolution:
        settled = await resolve(ops)
        if settled is not None:
            return settled

    def may_send() -> bool:
        # Past our lease another worker may take the row over: never POST then. After a stop
        # signal the row stays SUBMITTING: the next run looks it up, then sends.
        return stop.auth_error is None and lease_left() and not STOP.requested()

    last: PaymentsApiError | None = None
    for attempt in range(1, max_attempts + 1):
        if stop.auth_error is not None:
            break
        if not may_send():
            return Unresolved()
        try:
            return Created(await ops.create(may_send), adopted=False)
        except Withheld:
            if stop.auth_error is not None:
                break
            return Unresolved()
        except AuthError as exc:
            if exc.status_code == 403:
                # Not enabled for this merchant (destination, payment method): this row only.
                return Refused(exc.message, exc.status_code)
            stop.auth_error = exc  # a refused token: nothing was accepted; the run stops
            break
        except PaymentsApiError as exc:
            if not is_ambiguous_for_create(exc):
                if isinstance(exc, RejectedError):
                    return Refused(exc.message, exc.status_code)
                raise
            last = exc
            await asyncio.sleep(CREATE_RETRY.delay(exc, attempt))
            settled = await resolve(ops)
            if settled is not None:
                return settled
            if isinstance(exc, ConflictError) and ops.conflict_is_final:
                return Refused(exc.message, exc.status_code)
    return Deferred(str(last) if last is not None else None)
