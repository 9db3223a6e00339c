"""One progress line for logs that no one watches live (cron, --json, a Prefect worker log)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from payflow.ledger.records import PayoutRef
from payflow.ledger.states import PENDING_STATES, SENT_STATES, TERMINAL_STATES, RowState
from payflow.wording import counted

PROGRESS_EVERY_SECONDS = 10.0


# "Final" counts rows the service answered for and that are done: a row refused in the file
# (or as a conflict) was never sent, and counted as final it read "0 sent, 3 final".
SENT_AND_FINAL = SENT_STATES & TERMINAL_STATES
# Rows not sent, named while there are any, so a line shown before the first POST (or with
# repeats held, or rows refused) accounts for every row instead of reading as "nothing was sent".
UNSENT = (
    (RowState.VALIDATED, "to send"),
    (RowState.HELD, "held"),
    (RowState.REJECTED, "rejected"),
    (RowState.CONFLICT, "refused as conflicts"),
)
REFUSED = frozenset({RowState.REJECTED, RowState.CONFLICT})


def rows_in(counts: Mapping[str, int], states: frozenset[RowState]) -> int:
    """How many rows of `counts` (rows per state) stand in one of `states`."""
    return sum(n for state, n in counts.items() if state in states)


def progress_text(batch_id: str, counts: Mapping[str, int]) -> str:
    """`batch B: N rows sent, M final, K pending[, J to send][, H held][, R rejected]
    [, C refused as conflicts] (of T)` from rows per state."""
    waiting = "".join(
        f", {n} {label}" for state, label in UNSENT if (n := rows_in(counts, frozenset({state})))
    )
    return (
        f"batch {batch_id}: {counted(rows_in(counts, SENT_STATES), 'row')} sent, "
        f"{rows_in(counts, SENT_AND_FINAL)} final, "
        f"{rows_in(counts, PENDING_STATES)} pending{waiting} (of {sum(counts.values())})"
    )


class Throttled:
    """Emits a line at most once per `every` seconds; the line is only built when due."""

    def __init__(
        self,
        emit: Callable[[str], None],
        *,
        every: float = PROGRESS_EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        quiet_first: bool = False,
    ) -> None:
        self._emit = emit
        self._every = every
        self._clock = clock
        # quiet_first: the first line only once `every` has passed (a short task prints none).
        self._last: float | None = clock() if quiet_first else None

    def __call__(self, line: Callable[[], str]) -> None:
        now = self._clock()
        if self._last is None or now - self._last >= self._every:
            self._last = now
            self._emit(line())


def reconcile_progress_text(batch_id: str, done: int, rows: int) -> str:
    """`batch B: N of T rows reconciled with the service`."""
    return f"batch {batch_id}: {done} of {max(rows, done)} rows reconciled with the service"


def reconcile_progress(
    batch_id: str, emit: Callable[[str], None], *, every: float = PROGRESS_EVERY_SECONDS
) -> Callable[[int, int], None]:
    """A reconciliation's `progress`: a line on `emit` once per `every` seconds, none before
    the first interval (a short reconciliation says nothing), so a long one never looks stuck."""
    shown = Throttled(emit, every=every, quiet_first=True)

    def progress(done: int, rows: int) -> None:
        shown(lambda: reconcile_progress_text(batch_id, done, rows))

    return progress


WAITING_SHOWN = 5  # pending payouts named one by one; past that, counted


def waiting_text(
    pending: Sequence[PayoutRef], now: datetime, deadline_at: datetime, *, total: int
) -> str:
    """What tracking waits for: the oldest pending payouts (externalId, state, how long without
    news), how many in all, and when it stops waiting (then the run ends 1 and reconcile-pending
    and the watchdog go on following them)."""
    oldest = sorted(pending, key=lambda ref: ref.last_status_at or now)[:WAITING_SHOWN]
    named = ", ".join(
        f"{ref.external_id} {ref.state} for {_age(now - (ref.last_status_at or now))}"
        for ref in oldest
    )
    more = f" and {total - len(oldest)} more" if total > len(oldest) else ""
    left = _age(max(deadline_at - now, timedelta(0)))
    return (
        f"waiting for {counted(total, 'payout')}: {named}{more}; tracking stops at "
        f"{deadline_at:%H:%M:%S} UTC (in {left}), then the run ends unpaid and reconcile-pending "
        "follows them"
    )


def _age(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"
