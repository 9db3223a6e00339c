"""What pays a batch `payflow approve` settled when no paused run of it went on: its pay run
died (a worker killed; an answer typed into its form reached nobody and Prefect shows it Running
for ever). The batch is resumed here exactly as the watchdog resumes it (`watch.watch_batch`:
the lease `resume:<batch>`, one resuming run, the form's answer recorded first), or the line
says when the watchdog will, or that no watchdog is deployed to do it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from payflow.ledger import Ledger
from payflow.ledger.run_beats import batch_beats
from payflow.notify import send
from payflow.paying.workers import new_worker_id
from payflow.settings import Settings
from payflow.watchdog.answers import record_form_answer
from payflow.watchdog.watch import Verdict, Watched, watch_batch


def going_on(settings: Settings, ledger: Ledger, batch_id: str) -> str | None:
    """One line saying what pays the approved batch now that no paused run of it was resumed;
    None when no pay run of it is on Prefect (then `payflow pay` pays it)."""
    from payflow.watchdog.prefect_runs import PrefectRuns, watchdog_on_schedule

    window = settings.run_stale_window
    runs = PrefectRuns(ledger, settings.watchdog_deployment, window)
    try:
        watched = watch_batch(
            ledger,
            runs,
            batch_id,
            new_worker_id(),
            record_form_answer,
            lambda notice: send(settings, notice),
            window,
        )
    except Exception as exc:  # the approval is recorded: say so, and what still pays it
        return (
            f"its pay run died and no resuming run was started ({type(exc).__name__}): "
            f"`payflow pay {batch_id}` pays it"
        )
    if watched is not None:
        return _said(batch_id, watched)
    now = ledger.now()
    beats = batch_beats(ledger, batch_id)
    if any(b.alive(now, window) for b in beats):
        alive = _at(beats[0].beat_at)
        return (
            f"a pay run of batch {batch_id} is alive (it beat at {alive}): it pays by this approval"
        )
    latest = runs.latest(batch_id)
    if latest is None or not latest.shown_living:
        return None
    # Shown Running (or Paused) and silent for less than the window: too young to call dead.
    heard = max([t for t in [latest.start_time, *(b.beat_at for b in beats)] if t is not None])
    judged = heard + window
    shown = f"its pay run {latest.name} shows {latest.state_name}, last heard at {_at(heard)}"
    watchdog = watchdog_on_schedule()
    if watchdog is None:
        return (
            f"{shown}; no watchdog is deployed on this Prefect server: if its worker died, "
            f"`payflow watchdog --once` after {_at(judged)} resumes it once"
        )
    every = (
        f"every {int(watchdog.every.total_seconds() // 60) or 1} min"
        if watchdog.every is not None
        else "on its schedule"
    )
    return (
        f"{shown}; if its worker died, the watchdog ({watchdog.name}, {every}) marks it Crashed "
        f"and resumes the batch once, at its first look after {_at(judged)}"
    )


def _said(batch_id: str, watched: Watched) -> str:
    if watched.verdict is Verdict.RESUMED:
        return f"{watched.line}, started here as the watchdog would (one run, under its lease)"
    if watched.verdict is Verdict.WAITING:
        return f"{watched.line}: it pays the batch when a worker takes it"
    if watched.verdict is Verdict.ELSEWHERE:
        return "a watchdog is resuming it now: its one new run pays the batch"
    return f"batch {batch_id} {watched.line}"


def _at(when: datetime) -> str:
    return f"{when.astimezone(UTC):%H:%M:%S} UTC"
