"""Starting the pay flow for an approved batch: the Prefect deployment when a Prefect server is
configured, otherwise `flows.pay_batch.pay_batch` in a thread of the console's own process."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from payflow.acts.actor import Actor
from payflow.acts.history import PAY_WAITS
from payflow.acts.pay import COMMAND_LINE, start_paying
from payflow.approvals import Approved, approval_status
from payflow.approvals.decide import prefect_api_configured
from payflow.connections import ledger_url_parameter
from payflow.console.context import ConsoleContext
from payflow.console.deployed import start_through_prefect
from payflow.ledger import BatchCounts
from payflow.ledger.actions import ActionView, last_action, record_action
from payflow.ledger.run_beats import RunBeat, batch_beats
from payflow.paying.heartbeat import beating
from payflow.paying.run_end import FAILED, FINISHED
from payflow.paying.workers import worker_is_dead
from payflow.prefect_server import no_heartbeats
from payflow.runtime import holds_api_token
from payflow.wording import counted

IN_PROCESS = "in the console process"  # the pay_started detail of a run in this process
# Runs that beat from their start (a console's thread, `payflow pay` / `run` in a terminal):
# never beating past `STALE_AFTER`, they never began.
BEATS_AT_ONCE = (IN_PROCESS, COMMAND_LINE)
STARTED = ("pay_started", "pay_resumed")

_running: dict[str, threading.Thread] = {}
_lock = threading.Lock()


class NotInterrupted(Exception):
    """There is no interrupted pay run to go on with; the message says why."""


def start_payment(
    ctx: ConsoleContext, batch_id: str, payer: Actor, *, acknowledge_warnings: bool = False
) -> str:
    """Start paying the batch as the ledger holds it now, as `payer`'s act (`acts.pay`); a
    sentence saying where it runs.

    The pay flow pays only while the ledger's approval status says Approved (bound to the
    batch's content and totals), so a batch changed since the decision pays nothing. A
    deployment's run waiting paused for the batch's approval is resumed with the checker's
    answer (`acknowledge_warnings` as they gave it) instead."""
    actor = payer.name
    payer.require_operator("pays a batch")
    if through_prefect(ctx):
        return start_through_prefect(ctx, batch_id, actor, acknowledge_warnings)
    if holds_no_token(ctx):
        # Makers' and checkers' console: a run here would stop at its first request. The
        # approval stands in the ledger, and the paying process pays by it.
        why = (
            "approved; this console holds no payments API token, so it pays nothing: the "
            f"paying process (which holds it) pays the batch: payflow pay {batch_id}"
        )
        record_action(ctx.ledger, actor, PAY_WAITS, batch_id, detail=why)
        return why
    with _lock:
        running = _running.get(batch_id)
        if running is not None and running.is_alive():
            return "the payout run of this batch is already running"
        elsewhere = _beating_elsewhere(ctx, batch_id)
        if elsewhere is not None:
            # A deployment's run waiting paused for this approval (a daily run) would wake to
            # it later beside a run started here: two runs of one batch.
            why = (
                f"approved, but {elsewhere.label} of this batch runs outside this console (a "
                "deployment's run waiting for this approval, or paying); with no Prefect server "
                "set (PREFECT_API_URL) this console can neither resume it nor pay beside it: "
                "answer approve in that run's await-approval form in Prefect, and it pays by "
                "this approval"
            )
            record_action(ctx.ledger, actor, PAY_WAITS, batch_id, detail=why)
            return why
        if not start_paying(ctx.ledger, batch_id, payer, where=IN_PROCESS):
            return "the batch is not approved as it is now; nothing is paid"
        thread = threading.Thread(
            target=_pay_here, args=(ctx, batch_id, actor), daemon=True, name="pay-batch"
        )
        _running[batch_id] = thread
    thread.start()
    return "payout run started in the console process"


def through_prefect(ctx: ConsoleContext) -> bool:
    """Whether this console's pay runs go to the Prefect deployment (its workers pay)."""
    if ctx.pay_through_prefect is None:
        return prefect_api_configured()
    return ctx.pay_through_prefect


def holds_no_token(ctx: ConsoleContext) -> bool:
    """A console of makers and checkers: no PAYFLOW_API_TOKEN, and not the embedded sandbox."""
    return not ctx.target.sandbox and not holds_api_token(ctx.settings)


def start_local_prefect(timeout_seconds: int | None = None) -> str:
    """Start Prefect's temporary server once for the console's life; its API URL.

    In-process pay runs then talk to this one server instead of each starting its own from a
    worker thread (slow, and on a loaded machine a run could stall before its first task)."""
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    # Once per process, stopped at exit; None: PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.
    server.start(timeout=timeout_seconds)
    return str(server.api_url)


def _pay_here(ctx: ConsoleContext, batch_id: str, actor: str) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from payflow.flows.pay_batch import pay_batch, pay_result

    problem = None
    try:
        with (
            # Beats from the start: Prefect's engine takes seconds to reach the flow's own beat.
            beating(ctx.ledger, batch_id, "the run in a console", ctx.settings.run_beat_seconds),
            # The console's own server (`start_local_prefect`, or the one `payflow console`
            # started): as a command's flows on its own server, no flow-run heartbeats.
            temporary_settings(
                {PREFECT_API_URL: ctx.prefect_api_url or start_local_prefect(), **no_heartbeats()}
            ),
        ):
            # The flow records its own end (pay_finished / pay_failed) through `started_by`.
            pay_result(
                pay_batch(
                    batch_id,
                    wait_for_approval=False,
                    ledger_url=ledger_url_parameter(ctx.target.ledger_url, ctx.settings),
                    out_dir=ctx.batch_dir(batch_id).url,
                    api_url=ctx.target.api_url,
                    sandbox=ctx.target.sandbox,
                    callback_url=ctx.target.callback_url,
                    started_by=actor,
                    return_state=True,
                )
            )
    except BaseException as exc:  # a thread that dies silently would leave "paying" forever
        problem = _one_line(exc)
    finally:
        last = last_action(ctx.ledger, batch_id, "pay_started", FINISHED, FAILED)
        if last is None or last.action == "pay_started":
            # No hook ran: the run never began (e.g. Prefect's server did not start).
            detail = problem or "the run ended without recording its end"
            record_action(ctx.ledger, actor, FAILED, batch_id, detail=detail)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def is_paying(batch_id: str) -> bool:
    """True while this process pays the batch."""
    thread = _running.get(batch_id)
    return thread is not None and thread.is_alive()


def is_interrupted(ctx: ConsoleContext, batch_id: str, counts: BatchCounts) -> bool:
    """True when the batch's last pay run was started and is seen dead in the ledger (its
    heartbeat stale, or its process gone from this host) with rows unsent or unfinished.

    Every console and worker reads the same heartbeats, so a run alive in another console or a
    Prefect worker reads "paying" here too, and one whose worker died reads interrupted."""
    last = _last_run_with_rows_left(ctx, batch_id, counts)
    return last is not None and last.action in STARTED and _run_is_gone(ctx, batch_id, last)


def can_go_on(ctx: ConsoleContext, batch_id: str, counts: BatchCounts) -> bool:
    """True when the batch's last pay run is over without finishing what it had: interrupted
    (see `is_interrupted`), or stopped (balance, the API) with rows unsent or unfinished; or
    when the approved batch was left to a run elsewhere (`PAY_WAITS`) that no longer beats."""
    last = _last_run_with_rows_left(ctx, batch_id, counts)
    if last is None or (holds_no_token(ctx) and not through_prefect(ctx)):
        # Without the token a run here pays nothing: the paying process goes on.
        return False
    # PAY_WAITS: approved, its run left to a run elsewhere that is no longer alive.
    return last.action in (FAILED, PAY_WAITS) or _run_is_gone(ctx, batch_id, last)


def run_alive(ctx: ConsoleContext, batch_id: str) -> bool:
    """True while some pay run of the batch beats in the ledger (any console, worker or shell)."""
    if is_paying(batch_id):
        return True
    now = ctx.ledger.now()
    return any(
        _beats_alive(beat, now, ctx.settings.run_stale_window)
        for beat in batch_beats(ctx.ledger, batch_id)
    )


def awaits_approval(ctx: ConsoleContext, batch_id: str, counts: BatchCounts) -> bool:
    """True while a pay run of the batch beats before sending any of its rows, the batch not yet
    approved: a deployment's run waiting paused for the approval it asked for (a daily run
    waits hours), as a maker's submission asks for one."""
    if not (counts.to_send or counts.pending) or counts.own_sent:
        return False
    if not run_alive(ctx, batch_id):
        return False
    return not isinstance(approval_status(ctx.ledger, batch_id), Approved)


def _last_run_with_rows_left(
    ctx: ConsoleContext, batch_id: str, counts: BatchCounts
) -> ActionView | None:
    """The last start or end of a pay run of the batch, when rows are unsent or unfinished and
    no run of the batch is alive; else None."""
    if not (counts.to_send or counts.pending) or run_alive(ctx, batch_id):
        return None
    # Read after the liveness check. A deployment's run ends its beat a moment before its hook
    # records the end: read then, it is interrupted, and going on would find nothing to send.
    return last_action(ctx.ledger, batch_id, *STARTED, PAY_WAITS, FINISHED, FAILED)


def _run_is_gone(ctx: ConsoleContext, batch_id: str, start: ActionView) -> bool:
    """True when the run `start` began is known dead from the ledger's heartbeats.

    A run that beat since its start is gone once no beat of it is alive; one that never did is
    gone when started in a console (which beats as its thread starts) over the settings'
    `run_stale_window` ago. A
    deployment's run that never beat waits for a worker, which only Prefect sees: not judged."""
    now = ctx.ledger.now()
    beats = [b for b in batch_beats(ctx.ledger, batch_id) if b.beat_at >= start.at]
    if beats:
        return not any(_beats_alive(beat, now, ctx.settings.run_stale_window) for beat in beats)
    return start.detail in BEATS_AT_ONCE and now - start.at >= ctx.settings.run_stale_window


def _beating_elsewhere(ctx: ConsoleContext, batch_id: str) -> RunBeat | None:
    """A pay run of the batch alive in another process (a worker, another console, a shell)."""
    now = ctx.ledger.now()
    alive = [
        beat
        for beat in batch_beats(ctx.ledger, batch_id)
        if _beats_alive(beat, now, ctx.settings.run_stale_window)
    ]
    return alive[0] if alive else None


def _beats_alive(beat: RunBeat, now: datetime, window: timedelta) -> bool:
    """Not ended, recent, and (on this host) its process still there: known at once."""
    return beat.alive(now, window) and not worker_is_dead(beat.run_id)


def last_heard(ctx: ConsoleContext, batch_id: str) -> str:
    """`flow run calm-owl was last heard from at 2026-11-27 10:03:04 UTC`: the batch's most
    recent pay run by its heartbeat (`it never began` when none beat)."""
    beats = batch_beats(ctx.ledger, batch_id)
    if not beats:
        return "it never began"
    at = beats[0].beat_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{beats[0].label} was last heard from at {at}"


def rows_left(counts: BatchCounts) -> str:
    """`2 rows not sent yet, 1 row being sent when it stopped`: what a stopped run left."""
    submitting = counts.by_state.get("SUBMITTING", 0)
    parts = (
        (counts.new, "not sent yet"),
        (submitting, "being sent when it stopped"),
        (counts.pending - submitting, "sent and not final"),
    )
    return ", ".join(f"{counted(n, 'row')} {label}" for n, label in parts if n)


def go_on_paying(ctx: ConsoleContext, batch_id: str, payer: Actor) -> str:
    """Start the pay run again for an interrupted or stopped batch; a sentence saying where it
    runs.

    The engine pays by externalId exactly once: rows a dead run left being sent are looked up
    at the service before anything is sent again, so going on twice sends nothing twice."""
    counts = ctx.ledger.batch_counts(batch_id)
    if not can_go_on(ctx, batch_id, counts):
        raise NotInterrupted(
            "the payout run of this batch is running"
            if is_paying(batch_id)
            else "this batch has no stopped payout run to go on with"
        )
    status = approval_status(ctx.ledger, batch_id)
    if not isinstance(status, Approved):
        raise NotInterrupted(
            f"the batch is {type(status).__name__.lower()} as it is now, not approved; "
            "nothing is paid"
        )
    return start_payment(ctx, batch_id, payer)
