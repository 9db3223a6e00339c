"""A batch's approval as the pay flow needs it: status, the form to show, and time left; and
recording an answer typed into Prefect's resume form."""

from __future__ import annotations

from dataclasses import dataclass

from payflow.approvals.form import approval_form_markdown
from payflow.approvals.policy import ApprovalPolicy
from payflow.approvals.requirement import approval_requirement
from payflow.approvals.status import (
    ApprovalRefused,
    ApprovalStatus,
    Approved,
    Declined,
    Expired,
    approval_status,
    record_decision,
)
from payflow.ledger import Ledger


@dataclass(frozen=True)
class ApprovalView:
    """Where the batch's approval stands now, with the form an approver reads."""

    status: ApprovalStatus
    form: str
    has_warnings: bool
    seconds_left: int  # until a batch still waiting expires


def approval_view(ledger: Ledger, batch_id: str, policy: ApprovalPolicy) -> ApprovalView:
    """Status, form (totals, warnings, the rule that applies) and seconds until expiry."""
    requirement = approval_requirement(ledger, batch_id, policy)
    status = approval_status(ledger, batch_id, policy)
    left = int((requirement.expires_at - ledger.now()).total_seconds())
    return ApprovalView(
        status,
        approval_form_markdown(requirement, status),
        bool(requirement.acknowledgements),  # warnings and rows above the per-row maximum
        max(0, left),
    )


def record_prefect_answer(
    ledger: Ledger,
    batch_id: str,
    policy: ApprovalPolicy,
    *,
    approve: bool,
    approver: str,
    acknowledge_warnings: bool,
) -> str | None:
    """Record an answer from the resume form (`via="prefect"`); None when recorded or already
    settled (`payflow approve` records before it resumes), else why it was refused."""
    if isinstance(approval_status(ledger, batch_id, policy), Approved | Declined | Expired):
        return None
    try:
        record_decision(
            ledger,
            batch_id,
            approver=approver,
            decision="approve" if approve else "decline",
            acknowledge_warnings=acknowledge_warnings,
            via="prefect",
            policy=policy,
        )
    except ApprovalRefused as exc:
        return str(exc)
    return None
