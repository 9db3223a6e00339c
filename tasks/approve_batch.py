"""Tasks of the approval gate: glue over `payflow.approvals`."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from payflow.approvals import ApprovalRefused
from payflow.approvals.view import ApprovalView, approval_view, record_prefect_answer
from payflow.connections import open_ledger

__all__ = ["ApprovalView", "read_approval", "record_answer", "submit_in_flow"]


@task(name="read-approval", cache_policy=NO_CACHE)
def read_approval(ledger_url: str, batch_id: str) -> ApprovalView:
    """The batch's approval status and form, from the ledger as it is now (its recorded policy:
    never a file of this worker's environment). A batch registered with no terms is held to
    the active policy from here on."""
    from payflow.acts.register import ensure_terms

    ledger = open_ledger(ledger_url)
    ensure_terms(ledger, batch_id)
    return approval_view(ledger, batch_id)


@task(name="record-approval-answer", cache_policy=NO_CACHE)
def record_answer(
    ledger_url: str,
    batch_id: str,
    *,
    approve: bool,
    approval_code: str,
    acknowledge_warnings: bool,
    decline_reason: str = "",
) -> str | None:
    """Record a resume-form answer; why it was refused, or None."""
    return record_prefect_answer(
        open_ledger(ledger_url),
        batch_id,
        approve=approve,
        approval_code=approval_code,
        acknowledge_warnings=acknowledge_warnings,
        decline_reason=decline_reason,
    )


def submit_in_flow(
    ledger_url: str, batch_id: str, claimed: str | None, owner: str | None = None
) -> None:
    """Submit a batch a flow registered (the act), as the maker the flow can vouch for: the
    command line's signed-in operator running it in-process, else the operator whose OS
    account `owner` dropped the file; else with no maker, which a maker supplies later with
    `payflow submit`. A plain function, not a task: the command line's actor lives in this
    thread's context."""
    from payflow.acts.register import deployed_maker, submit

    ledger = open_ledger(ledger_url)
    maker = deployed_maker(ledger, owner)
    try:
        submit(ledger, batch_id, maker, claimed=claimed)
    except ApprovalRefused as exc:  # submitted by another maker before: the batch keeps theirs
        get_run_logger().warning("batch %s: %s", batch_id, exc)
