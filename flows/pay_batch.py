"""Paying a batch already in the ledger: approval, balance, submit, track, report.

It starts from a batch id, never from a file: what was registered (and approved) is what pays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from functools import partial
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import (
    create_markdown_artifact,
)
from prefect.client.schemas.objects import State
from prefect.futures import PrefectFuture, as_completed, wait
from prefect.states import Cancelled, Failed

from payflow.acts.reconcile import SANDBOX_ENDING
from payflow.connections import RunTarget, open_ledger, run_target
from payflow.expected import ExpectedFailure, quiet_expected_failures
from payflow.flows.approval import APPROVAL_TIMEOUT_SECONDS, BatchStopped, ensure_approved
from payflow.ledger import BatchCounts, utc_now
from payflow.ledger.states import PENDING_STATES, TO_SEND_STATES
from payflow.notices import unpaid_rows
from payflow.notify import tell
from payflow.paying import ChunkLoop, ChunkResult, SubmitStats
from payflow.paying.heartbeat import beating
from payflow.paying.knobs import PayKnobs
from payflow.paying.run_end import NOT_ALL_PAID, REPORT_NOT_WRITTEN, record_pay_run_end
from payflow.paying.sandbox_end import settle_sandbox
from payflow.paying.stop import stop_since
from payflow.paying.workers import new_worker_id
from payflow.progress_line import Throttled, progress_text, rows_in, waiting_text
from payflow.run_results import PayResult
from payflow.settings import Settings
from payflow.shown import Progress, shown
from payflow.stopping import STOP, RunInterrupted, StoppedByOperator
from payflow.tasks.count_batch import count_batch, count_latest_attempts, count_not_rechecked
from payflow.tasks.reconcile_batch import (
    reconcile_batch,
    report_batch,
    snapshot_balance,
    write_batch_report_only,
)
from payflow.tasks.submit_payouts import (
    check_merchant_balance,
    check_unchecked_rows,
    release_dead_leases,
    submit_payout_chunk,
)
from payflow.tasks.track_payouts import track_payouts
from payflow.wording import counted


@flow(
    name="pay-batch",
    persist_result=False,
    log_prints=False,
    on_completion=[record_pay_run_end],
    on_failure=[record_pay_run_end],
    on_crashed=[record_pay_run_end],
    on_cancellation=[record_pay_run_end],
)
def pay_batch(
    batch_id: str,
    out_dir: str | None = None,
    api_url: str | None = None,
    sandbox: bool = False,
    callback_url: str | None = None,
    chunk_size: int | None = None,
    max_in_flight: int | None = None,
    track_deadline: float | None = None,
    poll_interval: float | None = None,
    approval_timeout_seconds: int = APPROVAL_TIMEOUT_SECONDS,
    wait_for_approval: bool = True,
    ledger_url: str | None = None,
    started_by: str | None = None,
    sandbox_ends_with_run: bool = False,
) -> PayResult | State[PayResult]:
    """Pay the batch's rows not yet sent, follow every payout to a final status, report; a
    Failed state named `NOT_ALL_PAID` (with the result) when some row is not COMPLETED.

    Before the first payout the approval policy must say Approved, read from the ledger: a
    batch under every limit goes on by itself; otherwise the run pauses in a tagged subflow
    (or, with `wait_for_approval=False`, stops with `ApprovalNeeded`). Knobs left None default
    from settings, and so does `ledger_url`. With `started_by` (who started it: the console's
    checker, the signed-in operator of `payflow pay` / `run`, the watchdog) the run appends its
    end to the batch's history, wherever it runs. `sandbox_ends_with_run`: the caller stops the
    embedded sandbox when the run returns (`payflow run`), so the run applies its pending moves
    and reads them first, as it does with a sandbox it started itself."""
    quiet_expected_failures()
    settings = Settings()
    knobs = PayKnobs.from_settings(
        settings,
        chunk_size=chunk_size,
        max_in_flight=max_in_flight,
        track_deadline=track_deadline,
        poll_interval=poll_interval,
    )
    reports = out_dir or settings.reports_location()
    with (
        run_target(settings, api_url, sandbox, callback_url) as configured,
        _beating(ledger_url or configured.ledger_url, batch_id, settings.run_beat_seconds),
    ):
        target = replace(configured, ledger_url=ledger_url) if ledger_url else configured
        # A `payflow stop` recorded after this moment stops the run before its next chunk.
        started = open_ledger(target.ledger_url).now()
        before = count_batch(target.ledger_url, batch_id)
        if before.to_send:
            ensure_approved(
                target.ledger_url,
                batch_id,
                wait=wait_for_approval,
                timeout_seconds=approval_timeout_seconds,
            )
            check_unchecked_rows(target, batch_id)
            _check_balance(target, batch_id, reports)
        release_dead_leases(target, batch_id)
        stop = partial(stop_since, open_ledger(target.ledger_url), batch_id, started)
        sent = _submit_all(target, batch_id, knobs, before.to_send, lambda: stop() is not None)
        if STOP.requested():
            raise RunInterrupted(batch_id, STOP.signal_name)
        stopped = stop()
        if stopped is not None:
            # Whether or not Prefect's cancellation reached this run (its worker's observer
            # gives up after a server outage), it ends here, Cancelled, and says why.
            left = count_batch(target.ledger_url, batch_id).to_send
            line = (
                f"batch {batch_id}: stopped by {stopped.actor} (payflow stop): nothing more is "
                f"sent; {counted(left, 'row')} not sent, every row in the ledger: "
                f"payflow pay {batch_id} goes on"
            )
            get_run_logger().warning(line)
            return Cancelled(name="Stopped", message=line, data=StoppedByOperator(line))
        on_progress = _track_progress(target.ledger_url, batch_id, knobs.track_deadline)
        tracked = track_payouts(target, batch_id, knobs, on_progress=on_progress)
        if tracked.pending_external_ids and not STOP.requested():
            # It waited for them until its deadline: said once more, with what follows them.
            get_run_logger().warning(
                "batch %s: tracking deadline passed with %s not final; the run ends unpaid, "
                "reconcile-pending and the watchdog keep following them (payflow status %s)",
                batch_id,
                counted(len(tracked.pending_external_ids), "payout"),
                batch_id,
            )
        if STOP.requested():
            # Tracking stops on a signal as on its deadline: it read "still pending at the
            # deadline", exit 1, with no resume line; the next run tracks and reconciles.
            raise RunInterrupted(batch_id, STOP.signal_name)
        if _settled(target, sandbox_ends_with_run or (api_url is None and target.sandbox)):
            # The sandbox ends with this run and just applied moves still due (a correction
            # after completion): the run re-fetches every payout, as a reconciliation would.
            reconciled = reconcile_batch(target, batch_id, reports, SANDBOX_ENDING)
        else:
            # The report from the ledger, where webhooks and polls put each final status: the
            # run does not re-fetch every payout; the scheduled reconciliation
            # (reconcile-pending, then reconcile-recent daily) and `payflow reconcile` do, and
            # the summary says so.
            reconciled = report_batch(target, batch_id, reports)
        # Read after the last state change: every figure below and the exit code follow it.
        counts = count_batch(target.ledger_url, batch_id)
        latest = count_latest_attempts(target.ledger_url, batch_id)
        unchecked = count_not_rechecked(target.ledger_url, batch_id)
    result = PayResult(
        batch_id=batch_id,
        counts=counts,
        sent=sent,
        report_csv=reconciled.report_csv,
        report_xlsx=reconciled.report_xlsx,
        sandbox=target.sandbox,
        pending=tracked.pending_external_ids,
        corrections=reconciled.corrected,
        latest=latest,
        report_error=reconciled.report_error,
        not_rechecked=unchecked,
    )
    summary = result.summary_markdown()
    shown(
        "the batch-summary artifact",
        lambda: create_markdown_artifact(key="batch-summary", markdown=summary),
    )
    if result.all_completed and not result.report_error:
        return result
    if result.all_completed:
        # Every row paid, but its report is missing: red, as `payflow run` exits 1 for it.
        return Failed(
            name=REPORT_NOT_WRITTEN,
            message=result.report_error,
            data=NotAllPaid(result.report_error, result),
        )
    # A run whose payouts did not all complete ends red in Prefect (and in its automations), as
    # `payflow run` exits 1: it read Completed whatever became of the payouts.
    unpaid = f"{result.by_latest.unpaid_line()}: payflow status {batch_id}"
    tell(settings, lambda: unpaid_rows(open_ledger(target.ledger_url), batch_id))
    return Failed(name=NOT_ALL_PAID, message=unpaid, data=NotAllPaid(unpaid, result))


class NotAllPaid(ExpectedFailure):
    """The run went to its end and some row is not COMPLETED; `result` says what became of each.

    The Failed state's data: Prefect raises it when a deployed run ends, so it must be an
    exception (a bare PayResult was logged as a TypeError with a traceback)."""

    def __init__(self, message: str, result: PayResult) -> None:
        super().__init__(message)
        self.result = result


def _settled(target: RunTarget, sandbox_ends: bool) -> bool:
    """True when the embedded sandbox, ending with this run (`sandbox_ends`), applied pending
    payout moves when asked: a move due after the run would be lost with it."""
    if not (sandbox_ends and target.sandbox):
        return False
    applied = settle_sandbox(target.api_url)
    if applied is None:
        get_run_logger().warning(
            "the embedded sandbox did not apply its pending moves when asked: the run's figures "
            "are the webhooks' and polls' word, not re-checked"
        )
    return bool(applied)


def pay_result(state: State[Any]) -> PayResult:
    """What a pay run called with `return_state=True` did, paid or not; re-raises what stopped
    it before its end (approval, balance, a signal)."""
    done = state.result(raise_on_failure=False)
    if isinstance(done, PayResult):
        return done
    if isinstance(done, NotAllPaid):
        return done.result
    if isinstance(done, BaseException):
        raise done
    raise RuntimeError(f"pay run ended {state.name} without a result: {state.message}")


@contextmanager
def _beating(ledger_url: str, batch_id: str, every: float) -> Iterator[None]:
    """The run's heartbeat in the ledger while it lives: how a console knows it is alive."""
    from prefect.runtime import flow_run

    # The process's one ledger (migrated once), as the run's tasks use: not a second engine
    # that checks the migrations again at every run's start.
    with beating(open_ledger(ledger_url), batch_id, f"flow run {flow_run.name}", every):
        yield


def _check_balance(target: RunTarget, batch_id: str, reports: str) -> None:
    """The balance covers what is left to pay (counted after the approval)."""
    now = count_batch(target.ledger_url, batch_id)
    balance = check_merchant_balance(target, now.amounts_to_pay())
    if not balance.ok:
        write_batch_report_only(target.ledger_url, batch_id, reports, target.sandbox)
        raise BatchStopped(balance.message)
    snapshot_balance(target, batch_id)


def _track_progress(
    ledger_url: str, batch_id: str, deadline: float
) -> Callable[[Mapping[str, int]], None]:
    """A log line every ten seconds (worker logs), plus the run's progress artifact. Once only
    payouts waiting for their final status are left, the line names them, how long each went
    without news, and when tracking stops waiting (a run sat at "30 final" for 15 minutes with
    no word of which row it waited for, or until when)."""
    logger = get_run_logger()
    deadline_at = utc_now() + timedelta(seconds=deadline)
    artifact = Progress("rows final")
    log_line = Throttled(logger.info)
    shown = -1.0

    def on_progress(counts: Mapping[str, int]) -> None:
        nonlocal shown
        log_line(lambda: _line(counts))
        total = sum(counts.values())
        percent = 100.0 * BatchCounts(batch_id, counts).final / total if total else 100.0
        if round(percent, 1) != shown:
            shown = round(percent, 1)
            artifact.update(shown)

    def _line(counts: Mapping[str, int]) -> str:
        line = progress_text(batch_id, counts)
        pending = rows_in(counts, PENDING_STATES)
        if not pending or rows_in(counts, TO_SEND_STATES):
            return line
        ledger = open_ledger(ledger_url)
        refs = ledger.unfinished(batch_id) if pending <= WAITING_READ_AT_MOST else []
        if not refs:
            return line
        return f"{line}; {waiting_text(refs, ledger.now(), deadline_at, total=pending)}"

    return on_progress


# Past this many pending payouts the line only counts them (reading them all would cost more
# than the line is worth).
WAITING_READ_AT_MOST = 200


def _submitted_line(batch_id: str, sent: int, rows: int) -> str:
    return f"batch {batch_id}: {sent} of {rows} rows submitted"


def _submit_all(
    target: RunTarget, batch_id: str, knobs: PayKnobs, rows: int, stopped: Callable[[], bool]
) -> SubmitStats:
    """Claim-and-submit chunks, one task each, in `knobs.lanes` lanes until none are left, or
    until `stopped()` (an operator's `payflow stop`, read from the ledger between chunks).

    Two chunk tasks run at a time, each with half the requests in flight, so one chunk's tail
    (its last requests, then the next claim) overlaps the other's full flight.
    """
    worker_id = new_worker_id()
    logger = get_run_logger()
    log_line = Throttled(logger.info)
    progress = Progress("rows submitted")
    running: dict[PrefectFuture[ChunkResult], ChunkLoop] = {}
    loops = [ChunkLoop() for _ in range(knobs.lanes)]
    for loop in loops:
        running[submit_payout_chunk.submit(target, batch_id, worker_id, knobs)] = loop
    while running:
        done = next(as_completed(list(running)))
        loop = running.pop(done)
        try:
            result = done.result()
        except Exception:
            # Let the other lane finish its chunk: it settles or releases the rows it holds.
            wait(list(running))
            raise
        if loop.goes_on_after(result) and not stopped():
            running[submit_payout_chunk.submit(target, batch_id, worker_id, knobs)] = loop
        sent = sum(lane.total.total for lane in loops)
        log_line(partial(_submitted_line, batch_id, sent, rows))
        if rows:
            progress.update(min(100.0, 100.0 * sent / rows))
    total = SubmitStats()
    for loop in loops:
        total.merge(loop.total)
    return total
