"""Tasks of the approval gate: glue over `payflow.approvals`."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.approvals import load_policy
from payflow.approvals.view import ApprovalView, approval_view, record_prefect_answer
from payflow.connections import open_ledger

__all__ = ["ApprovalView", "read_approval", "record_answer"]


def _policy_path(approvals_file: str | None) -> Path | None:
    return Path(approvals_file) if approvals_file else None


@task(name="read-approval", cache_policy=NO_CACHE)
def read_approval(ledger_url: str, batch_id: str, approvals_file: str | None) -> ApprovalView:
    """The batch's approval status and form, from the ledger as it is now."""
    policy = load_policy(_policy_path(approvals_file))
    return approval_view(open_ledger(ledger_url), batch_id, policy)


@task(name="record-approval-answer", cache_policy=NO_CACHE)
def record_answer(
    ledger_url: str,
    batch_id: str,
    approvals_file: str | None,
    *,
    approve: bool,
    approver: str,
    acknowledge_warnings: bool,
    decline_reason: str = "",
) -> str | None:
    """Record a resume-form answer; why it was refused, or None."""
    return record_prefect_answer(
        open_ledger(ledger_url),
        batch_id,
        load_policy(_policy_path(approvals_file)),
        approve=approve,
        approver=approver,
        acknowledge_warnings=acknowledge_warnings,
        decline_reason=decline_reason,
    )
