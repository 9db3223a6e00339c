"""The watchdog: every batch with rows left to send whose pay run died is resumed exactly once,
or becomes an open finding; nobody is left to notice it by chance.

A batch is looked at when it has rows VALIDATED, SUBMITTING, CREATED or PROCESSING and no pay
run of it beats in the ledger. Its newest Prefect run tells how it ended: shown Running or
Paused with no heartbeat (a killed worker; an answer typed into its form reached nobody),
Crashed, Cancelled (an operator stopped it), Failed. A dead run's form answer is recorded
first, through the same checks as the live run's; then one resuming run is started under the
ledger lease `resume:<batch>`, so two watchdogs, or a watchdog and the daily run, never start
two (and the run's idempotency key chain makes the same run whoever asks).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any, Protocol

from payflow.approvals.requirement import approval_requirement
from payflow.approvals.status import (
    Approved,
    Declined,
    Expired,
    Pending,
    Void,
    approval_status,
    status_under,
)
from payflow.ledger import FindingKind, Ledger, RowState
from payflow.ledger.leases import release_lease, take_lease
from payflow.ledger.run_beats import batch_beats
from payflow.ledger.unsent import UnsentReason
from payflow.notices import approval_expiring
from payflow.notify import Event, Notice, batch_notice
from payflow.paying.heartbeat import left_behind
from payflow.wording import counted

logger = logging.getLogger(__name__)

WATCHDOG_ACTOR = "watchdog"
# Long enough for the resuming run to reach a worker and beat; then its beat keeps others off.
RESUME_LEASE = timedelta(minutes=5)
# Resumes of one batch after which a run that died again is a finding, not another run.
MAX_RESUMES = 3
# How long before a waiting batch's approval expires the checkers are told.
EXPIRING_WITHIN = timedelta(hours=1)
LOOKED_AT = [
    RowState.VALIDATED.value,
    RowState.SUBMITTING.value,
    RowState.CREATED.value,
    RowState.PROCESSING.value,
]
LEFT_BEHIND = (
    "no heartbeat of its batch in the ledger for longer than PAYFLOW_RUN_STALE_AFTER (a "
    "minute unless set): its process is gone (a worker "
    "killed or restarted); the watchdog recorded any answer given in its form and resumed the "
    "batch in a new run"
)


class Verdict(StrEnum):
    """What the watchdog did about one batch."""

    RESUMED = "resumed"  # a dead run's batch got its one new run
    WAITING = "waiting"  # its resuming run exists and waits for a worker
    NOT_RESUMED = "not resumed"  # an open finding says why, and what to do
    STOPPED = "stopped"  # an operator stopped its run: left as it is
    FOLLOWED = "followed"  # only unconfirmed payouts: reconcile-pending polls them
    NEEDS_PAY = "needs pay"  # no Prefect server here to start a run: `payflow pay` resumes it
    ELSEWHERE = "taken"  # another watchdog holds its lease


@dataclass(frozen=True, slots=True)
class Watched:
    """One batch the watchdog looked at and what it did, in one line."""

    batch_id: str
    verdict: Verdict
    line: str
    run_id: str | None = None


class RunState(Protocol):
    """The newest pay run of a batch, as `prefect_runs.LatestRun` reads it."""

    @property
    def run_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def state_name(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def start_time(self) -> Any: ...
    @property
    def shown_living(self) -> bool: ...
    @property
    def crashed(self) -> bool: ...
    @property
    def cancelled(self) -> bool: ...
    @property
    def failed(self) -> bool: ...
    @property
    def final(self) -> bool: ...
    @property
    def resumes(self) -> int: ...


class Runs(Protocol):
    """The orchestrator's side: read, crash and start a batch's pay runs."""

    def latest(self, batch_id: str) -> RunState | None: ...
    def answers(self, run_id: str) -> list[dict[str, Any]]: ...
    def crash(self, run_id: str, why: str) -> list[str]: ...
    def start(self, batch_id: str) -> str: ...


RecordAnswer = Callable[[Ledger, str, dict[str, Any]], str | None]


@dataclass(frozen=True, slots=True)
class Rows:
    """The batch's rows the watchdog cares about."""

    not_sent_yet: int
    submitting: int
    refused_each_try: int
    unconfirmed: int

    @property
    def unsent(self) -> int:
        return self.not_sent_yet + self.submitting


def rows_of(ledger: Ledger, batch_id: str) -> Rows:
    """Rows not sent yet (approved or not), SUBMITTING, refused each try, and unconfirmed."""
    by_state = ledger.batch_counts(batch_id).by_state
    reasons: dict[UnsentReason, int] = {}
    for total in ledger.unsent_totals(batch_id):
        reasons[total.reason] = reasons.get(total.reason, 0) + total.rows
    return Rows(
        reasons.get(UnsentReason.NOT_SENT_YET, 0),
        by_state.get(RowState.SUBMITTING.value, 0),
        reasons.get(UnsentReason.REFUSED_EACH_TRY, 0),
        by_state.get(RowState.CREATED.value, 0) + by_state.get(RowState.PROCESSING.value, 0),
    )


def watch_once(
    ledger: Ledger,
    runs: Runs | None,
    *,
    holder: str,
    record_answer: RecordAnswer,
    tell: Callable[[Notice], object],
    stale_after: timedelta,
) -> list[Watched]:
    """Look at every batch with unfinished rows once; what was done about each one that has no
    live run. `runs` None: no Prefect server (a dead run is then reported, for `payflow pay`)."""
    done: list[Watched] = []
    for batch_id in ledger.batches_with(LOOKED_AT):
        try:
            watched = watch_batch(ledger, runs, batch_id, holder, record_answer, tell, stale_after)
        except Exception as exc:  # one batch's trouble (Prefect down) must not hide the others
            logger.warning("watchdog: batch %s not looked at: %s", batch_id, _one_line(exc))
            continue
        if watched is not None:
            logger.info("watchdog: batch %s %s", batch_id, watched.line)
            done.append(watched)
    return done


def watch_batch(
    ledger: Ledger,
    runs: Runs | None,
    batch_id: str,
    holder: str,
    record_answer: RecordAnswer,
    tell: Callable[[Notice], object],
    stale_after: timedelta,
) -> Watched | None:
    """What the watchdog did about one batch; None when it had nothing to do (a run beats,
    one too young to judge, a batch waiting for a person). `payflow approve` calls it too."""
    now = ledger.now()
    beats = batch_beats(ledger, batch_id)
    rows = rows_of(ledger, batch_id)
    if any(b.alive(now, stale_after) for b in beats):
        # A run beats: it pays, or waits for its approval alive (then say so before it expires).
        if rows.not_sent_yet:
            _warn_expiring(ledger, batch_id, holder, tell)
        return None
    latest = runs.latest(batch_id) if runs is not None else None
    dead_living = latest is not None and latest.shown_living
    if (
        latest is not None
        and dead_living
        and not left_behind(ledger, batch_id, latest.start_time, stale_after)
    ):
        return None  # too young to judge: its first beat comes after Prefect shows it Running
    if latest is not None and not latest.final and not latest.shown_living and rows.unsent:
        return Watched(batch_id, Verdict.WAITING, f"run {latest.name} waits for a worker")
    if not rows.unsent and not dead_living:
        return _left_to_follow(ledger, batch_id, rows, tell)
    lease = f"resume:{batch_id}"
    if not take_lease(ledger, lease, holder, RESUME_LEASE):
        return Watched(batch_id, Verdict.ELSEWHERE, "another watchdog is resuming it")
    answered, parents = "", ""
    if dead_living:
        assert latest is not None and runs is not None
        answered = _record_answers(ledger, batch_id, runs, latest.run_id, record_answer)
        above = runs.crash(latest.run_id, LEFT_BEHIND)
        if above:  # Prefect showed them Running for ever: the line (and artifact) says so
            parents = f"; {' and '.join(above)} above it marked Crashed too"
    status = approval_status(ledger, batch_id)
    unsent = f"{counted(rows.unsent, 'row')} unsent"
    if not rows.unsent:
        release_lease(ledger, lease, holder)
        return _left_to_follow(ledger, batch_id, rows, tell)
    if isinstance(status, Declined | Expired):
        release_lease(ledger, lease, holder)
        if not dead_living and not rows.submitting:
            return None  # an ended batch (declined, expired) that no run died paying
        why = (
            f"its approval expired at {status.expired_at}"
            if isinstance(status, Expired)
            else f"it was declined by {status.by}"
        )
        return _not_resumed(ledger, batch_id, f"its pay run died and {why}; {unsent}", tell)
    if not isinstance(status, Approved) and not dead_living:
        release_lease(ledger, lease, holder)
        return None  # waits for a person's approval, with no run that died
    if latest is not None and latest.cancelled and not dead_living:
        release_lease(ledger, lease, holder)
        return Watched(
            batch_id,
            Verdict.STOPPED,
            f"stopped by an operator ({unsent}): payflow pay {batch_id} goes on",
        )
    if latest is not None and latest.failed and not dead_living:
        reason = latest.message.strip().splitlines()[0] if latest.message.strip() else "failed"
        return _not_resumed(
            ledger, batch_id, f"its last run {latest.name} failed ({reason}); {unsent}", tell
        )
    died = dead_living or (latest is not None and latest.crashed)
    died = died or (latest is None and bool(beats) and beats[0].ended_at is None)
    if not died:
        release_lease(ledger, lease, holder)
        return None
    if latest is not None and latest.resumes >= MAX_RESUMES:
        # Its runs keep dying (a bug, a machine that cannot run it): another run would too.
        return _not_resumed(
            ledger,
            batch_id,
            f"its pay run died again after {counted(latest.resumes, 'resume')} by the watchdog "
            f"(the last: {latest.name}); {unsent}",
            tell,
        )
    if runs is None:
        release_lease(ledger, lease, holder)
        return Watched(
            batch_id,
            Verdict.NEEDS_PAY,
            f"its pay run died ({unsent}); no Prefect server here: payflow pay {batch_id} "
            "resumes it",
        )
    try:
        started = runs.start(batch_id)
    except Exception:
        release_lease(ledger, lease, holder)  # nothing started: the next look may try again
        raise
    asks = "" if isinstance(status, Approved) else "; it asks for approval again"
    line = f"its pay run died ({unsent}); resumed in run {started}{answered}{parents}{asks}"
    tell(
        batch_notice(
            Event.RUN_RESUMED,
            batch_id,
            [f"The pay run of batch {batch_id} died ({unsent}).", f"Resumed in run {started}."]
            + ([answered.strip("; ")] if answered else []),
            f"payflow status {batch_id}",
        )
    )
    return Watched(batch_id, Verdict.RESUMED, line, started)


def _warn_expiring(
    ledger: Ledger,
    batch_id: str,
    holder: str,
    tell: Callable[[Notice], object],
) -> None:
    """Tell the checkers once when a batch still waiting for approval expires within
    `EXPIRING_WITHIN` (the lease `notify:expiring:<batch>` makes it once)."""
    requirement = approval_requirement(ledger, batch_id)
    if not isinstance(status_under(ledger, requirement), Pending | Void):
        return
    left = requirement.expires_at - ledger.now()
    if left > EXPIRING_WITHIN or left <= timedelta(0):
        return
    if take_lease(ledger, f"notify:expiring:{batch_id}", holder, left + EXPIRING_WITHIN):
        tell(approval_expiring(ledger, batch_id, int(left.total_seconds())))


def _record_answers(
    ledger: Ledger,
    batch_id: str,
    runs: Runs,
    run_id: str,
    record_answer: RecordAnswer,
) -> str:
    """Record each answer typed into the dead run's form; what became of them, for the line."""
    said = []
    for answer in runs.answers(run_id):
        refused = record_answer(ledger, batch_id, answer)
        said.append(f"an answer in its form {'recorded' if refused is None else 'refused'}")
        if refused:
            logger.warning("watchdog: batch %s: form answer not recorded: %s", batch_id, refused)
    return "; " + ", ".join(said) if said else ""


def _left_to_follow(
    ledger: Ledger, batch_id: str, rows: Rows, tell: Callable[[Notice], object]
) -> Watched | None:
    """A batch with nothing to send and no live run: unconfirmed payouts are reconcile-pending's
    to poll; rows the service refused every time need a person."""
    if rows.refused_each_try:
        refused = counted(rows.refused_each_try, "row")
        return _not_resumed(
            ledger, batch_id, f"the service refused each try of {refused}; nothing holds them", tell
        )
    if rows.unconfirmed:
        return Watched(
            batch_id,
            Verdict.FOLLOWED,
            f"{counted(rows.unconfirmed, 'payout')} unconfirmed and no run follows them: "
            "reconcile-pending polls them",
        )
    return None


def _not_resumed(
    ledger: Ledger, batch_id: str, why: str, tell: Callable[[Notice], object]
) -> Watched:
    detail = f"not resumed: {why}; see payflow status {batch_id}"
    if ledger.open_batch_finding(batch_id, FindingKind.NOT_RESUMED, detail, actor=WATCHDOG_ACTOR):
        tell(
            batch_notice(
                Event.FINDING_OPENED,
                batch_id,
                [f"Batch {batch_id} was {detail}."],
                f"payflow findings {batch_id}",
            )
        )
    return Watched(batch_id, Verdict.NOT_RESUMED, detail)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
