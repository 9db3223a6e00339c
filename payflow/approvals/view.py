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


DECLINE_NEEDS_REASON = (
    "approve was off and decline_reason was empty: switch approve on to pay the batch, or write "
    "why in decline_reason to decline it"
)


def record_prefect_answer(
    ledger: Ledger,
    batch_id: str,
    policy: ApprovalPolicy,
    *,
    approve: bool,
    approver: str,
    acknowledge_warnings: bool,
    decline_reason: str = "",
) -> str | None:
    """Record an answer from the resume form (`via="prefect"`); None when recorded or already
    settled (`payflow approve` records before it resumes), else why it was refused. A decline
    needs its `decline_reason` (the note kept with it): the form's `approve` switch is off until
    moved, so a name and Submit alone would decline the batch for good."""
    if isinstance(approval_status(ledger, batch_id, policy), Approved | Declined | Expired):
        return None
    reason = decline_reason.strip()
    if not approve and not reason:
        return DECLINE_NEEDS_REASON
    try:
        record_decision(
            ledger,
            batch_id,
            approver=approver,
            decision="approve" if approve else "decline",
            note=None if approve else reason,
            acknowledge_warnings=acknowledge_warnings,
            via="prefect",
            policy=policy,
        )
    except ApprovalRefused as exc:
        return str(exc)
    return None
