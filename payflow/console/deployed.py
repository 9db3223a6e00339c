"""Paying an approved batch through Prefect: resume its pay run paused for the approval, else
start a run of the pay-batch deployment."""

from __future__ import annotations

import asyncio
from typing import Any

from prefect.deployments import run_deployment

from payflow.approvals.resume import Resumed, batch_tag, resume_paused_runs
from payflow.console.context import ConsoleContext
from payflow.console.history import PAY_WAITS
from payflow.ledger.actions import record_action


def start_through_prefect(
    ctx: ConsoleContext, batch_id: str, actor: str, acknowledge_warnings: bool
) -> str:
    """Resume the batch's pay run paused for approval (a daily inbox run), else start one; a
    sentence saying which. A resume Prefect refuses starts nothing."""
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
    run: Any = run_deployment(
        ctx.prefect_deployment,
        parameters={"batch_id": batch_id, "started_by": actor},
        timeout=0,
        as_subflow=False,
        tags=[batch_tag(batch_id)],
    )
    record_action(ctx.ledger, actor, "pay_started", batch_id, detail=f"flow run {run.name}")
    return f"payout flow run {run.name} started through the Prefect deployment"


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
