"""Paying an approved batch through Prefect: resume its pay run paused for the approval, else
find or start its one pay run by the key the daily run uses too (`paying.keyed_runs`)."""

from __future__ import annotations

import asyncio

from prefect.client.schemas.objects import FlowRun, StateType

from payflow.acts.history import PAY_WAITS
from payflow.approvals.resume import (
    WENT_ON_WITHIN_SECONDS,
    Resumed,
    resume_once_paused,
    resume_paused_runs,
)
from payflow.console.context import ConsoleContext
from payflow.ledger.actions import record_action
from payflow.paying.heartbeat import died_here, left_behind
from payflow.paying.keyed_runs import keyed_pay_run

LEFT_BEHIND = (
    "no heartbeat of its batch in the ledger for longer than PAYFLOW_RUN_STALE_AFTER (a "
    "minute unless set): its process is gone (a worker "
    "killed or restarted); a checker's console started another"
)


def start_through_prefect(
    ctx: ConsoleContext, batch_id: str, actor: str, acknowledge_warnings: bool
) -> str:
    """Resume the batch's pay run paused for approval (a daily inbox run), else find or start
    its keyed pay run; a sentence saying which. A resume Prefect refuses starts nothing."""
    try:
        told = _resumed(
            ctx,
            batch_id,
            actor,
            asyncio.run(resume_paused_runs(batch_id, True, actor, acknowledge_warnings)),
        )
    except Exception as exc:
        # A run started beside the paused one paid the batch too, and the paused one woke later
        # to a second run of it. The approval is recorded: the waiting run's form pays by it.
        why = (
            f"approved, but Prefect did not resume the payout run waiting for this batch "
            f"({type(exc).__name__}) and no other run was started: answer approve in the "
            "paused await-approval run's form in Prefect, and it pays by this approval"
        )
        record_action(ctx.ledger, actor, PAY_WAITS, batch_id, detail=why)
        return why
    if told:
        return told
    # By the daily run's key: its pay run, if it has one, is found instead of a second made
    # beside it; a run of it that ended (or died) gives way to its one successor.
    run = keyed_pay_run(
        ctx.prefect_deployment,
        batch_id,
        actor,
        nobody_behind=lambda found: _nobody_behind(ctx, batch_id, found),
        left_behind_why=LEFT_BEHIND,
        after_its_end=True,
    )
    if run.state is not None and run.state.type is StateType.RUNNING:
        # It read the ledger before this approval, and may pause for it any moment.
        resumed = asyncio.run(
            resume_once_paused(
                batch_id,
                str(run.id),
                actor,
                acknowledge_warnings,
                WENT_ON_WITHIN_SECONDS,
                gone_on=lambda: ctx.ledger.batch_counts(batch_id).own_sent > 0,
            )
        )
        told = _resumed(ctx, batch_id, actor, resumed)
        if told:
            return told
    record_action(ctx.ledger, actor, "pay_started", batch_id, detail=f"flow run {run.name}")
    return _found_or_started(run, actor)


def _nobody_behind(ctx: ConsoleContext, batch_id: str, run: FlowRun) -> bool:
    """No process runs this pay run shown Running or Paused: silent for the settings'
    `run_stale_window`, or (what "Go on paying" sees at once) its process gone from this host."""
    started = run.start_time
    window = ctx.settings.run_stale_window
    return left_behind(ctx.ledger, batch_id, started, window) or died_here(
        ctx.ledger, batch_id, started
    )


def _resumed(ctx: ConsoleContext, batch_id: str, actor: str, resumed: Resumed) -> str | None:
    """Record and say what a resume did; None when it found no paused run."""
    if resumed.went_on:
        detail = ", ".join(resumed.went_on)
        record_action(ctx.ledger, actor, "pay_resumed", batch_id, detail=detail)
        return f"the batch's paused payout run {resumed.went_on[0]} was resumed"
    started = [r for r in resumed.replaced if r.started]
    if started:
        # The paused run's worker had stopped: a run of its deployment replaces it.
        detail = f"flow run {started[0].started} replaced {started[0].dead}, which had stopped"
        record_action(ctx.ledger, actor, "pay_started", batch_id, detail=detail)
        return (
            f"the batch's paused payout run had stopped; flow run {started[0].started} "
            "was started in its place"
        )
    return None


def _found_or_started(run: FlowRun, actor: str) -> str:
    """`payout flow run calm-owl started ...`, or, for a run someone else started (the daily
    run), that it pays the batch and no second one was started."""
    by = (run.parameters or {}).get("started_by")
    if by == actor:
        return f"payout flow run {run.name} started through the Prefect deployment"
    return (
        f"the batch's payout run {run.name} (started by {by or 'Prefect'}) pays it by this "
        "approval; no second run was started"
    )
