"""Pay runs' heartbeats: a live run writes its beat every few seconds (a sixth of the settings'
`run_stale_window`); a stale beat is a run whose process died (a worker killed, a console
restarted), which records no end of its own.

Every console and worker on the ledger reads the same beats, so whether a batch is being paid
does not depend on which process asks. Each beat carries the window its own process keeps, and
a reader waits the longer of that and its own: a watchdog set to a shorter window than a
worker's never takes the worker's live run for a dead one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import desc, insert, select, update

from payflow.ledger.db import reader
from payflow.ledger.ledger import Ledger
from payflow.ledger.tables import PayRunBeat

# The window of a beat written before runs recorded theirs: it was 60 s for every process then.
UNRECORDED_WINDOW = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class RunBeat:
    """The heartbeat of one pay run of a batch."""

    run_id: str
    label: str
    started_at: datetime
    beat_at: datetime
    ended_at: datetime | None
    window: timedelta  # the silence after which its own process counts it dead

    def alive(self, now: datetime, within: timedelta) -> bool:
        """True while the run has not ended and beat within the longer of `within` (the
        reader's `run_stale_window`) and its own window before `now`."""
        return self.ended_at is None and self.recent(now, within)

    def recent(self, now: datetime, within: timedelta) -> bool:
        """True when the run beat (or ended) within the longer of `within` and its own window
        before `now`."""
        return now - self.beat_at < max(within, self.window)


def beat(
    ledger: Ledger, run_id: str, batch_id: str, label: str, window: timedelta = UNRECORDED_WINDOW
) -> None:
    """Record that the run is alive now (its first beat also records when it started, and the
    `window` of silence after which it counts as dead: 60 s unless given)."""
    now = ledger.now()
    with ledger.engine.begin() as conn:
        moved = conn.execute(
            update(PayRunBeat).where(PayRunBeat.run_id == run_id).values(beat_at=now)
        ).rowcount
        if not moved:
            conn.execute(
                insert(PayRunBeat).values(
                    run_id=run_id,
                    batch_id=batch_id,
                    label=label,
                    started_at=now,
                    beat_at=now,
                    stale_after_s=window.total_seconds(),
                )
            )


def end_beats(ledger: Ledger, run_id: str) -> None:
    """Record that the run ended (it beats no more, and is not waited for)."""
    now = ledger.now()
    with ledger.engine.begin() as conn:
        conn.execute(
            update(PayRunBeat).where(PayRunBeat.run_id == run_id).values(beat_at=now, ended_at=now)
        )


def batch_beats(ledger: Ledger, batch_id: str) -> list[RunBeat]:
    """The heartbeats of the batch's pay runs, the most recent first."""
    with reader(ledger.engine).connect() as conn:
        rows = conn.execute(
            select(PayRunBeat)
            .where(PayRunBeat.batch_id == batch_id)
            .order_by(desc(PayRunBeat.beat_at))
        ).all()
    return [
        RunBeat(
            r.run_id,
            r.label,
            r.started_at,
            r.beat_at,
            r.ended_at,
            UNRECORDED_WINDOW if r.stale_after_s is None else timedelta(seconds=r.stale_after_s),
        )
        for r in rows
    ]
