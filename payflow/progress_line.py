"""One progress line for logs that no one watches live (cron, --json, a Prefect worker log)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from payflow.ledger.states import PENDING_STATES, SENT_STATES, TERMINAL_STATES, RowState
from payflow.wording import counted

PROGRESS_EVERY_SECONDS = 10.0


def progress_text(batch_id: str, counts: Mapping[str, int]) -> str:
    """`batch B: N rows sent, M final, K pending[, J to send][, H held] (of T)` from rows per
    state."""

    def rows(states: frozenset[object]) -> int:
        return sum(n for state, n in counts.items() if state in states)

    # Rows not sent are named while there are any, so a line shown before the first POST (or
    # with repeats held) accounts for every row instead of reading as "nothing was sent".
    unsent = ((RowState.VALIDATED, "to send"), (RowState.HELD, "held"))
    waiting = "".join(
        f", {n} {label}" for state, label in unsent if (n := rows(frozenset({state})))
    )
    return (
        f"batch {batch_id}: {counted(rows(SENT_STATES), 'row')} sent, "
        f"{rows(TERMINAL_STATES)} final, "
        f"{rows(PENDING_STATES)} pending{waiting} (of {sum(counts.values())})"
    )


class Throttled:
    """Emits a line at most once per `every` seconds; the line is only built when due."""

    def __init__(
        self,
        emit: Callable[[str], None],
        *,
        every: float = PROGRESS_EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self._every = every
        self._clock = clock
        self._last: float | None = None

    def __call__(self, line: Callable[[], str]) -> None:
        now = self._clock()
        if self._last is None or now - self._last >= self._every:
            self._last = now
            self._emit(line())
