"""A batch's approval as the pay flow needs it: status, the form to show, and time left; and
recording an answer typed into Prefect's resume form."""

from __future__ import annotations

from dataclasses import dataclass

from payflow.approvals.form import approval_form_markdown
from payflow.approvals.requirement import approval_requirement
from payflow.approvals.status import (
    ApprovalRefused,
    ApprovalStatus,
    Approved,
    Declined,
    Expired,
    approval_status,
    status_under,
)
from payflow.ledger import Ledger


@dataclass(frozen=True)
class ApprovalView:
    """Where the batch's approval stands now, with the form an approver reads."""

    status: ApprovalStatus
    form: str
    has_warnings: bool
    seconds_left: int  # until a batch still waiting expires


def approval_view(ledger: Ledger, batch_id: str) -> ApprovalView:
    """Status, form (totals, warnings, the rule that applies) and seconds until expiry."""
    requirement = approval_requirement(ledger, batch_id)
    status = status_under(ledger, requirement)
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


def needs_code(batch_id: str) -> str:
    """Why an answer without a valid one-time code was not recorded, and where to approve."""
    return (
        "an answer here counts only with a one-time approval code, and none valid was given: "
        f"get one with `payflow approve {batch_id} --code` (signed in as a checker) or on the "
        f"batch's page in the console; or approve there, or with `payflow approve {batch_id}`"
    )


def record_prefect_answer(
    ledger: Ledger,
    batch_id: str,
    *,
    approve: bool,
    approval_code: str,
    acknowledge_warnings: bool,
    decline_reason: str = "",
) -> str | None:
    """Record an answer from the resume form (`via="prefect"`) as the checker its one-time
    code names; None when recorded or already settled (`payflow approve` records before it
    resumes), else why it was refused. A decline needs its `decline_reason` (the note kept with
    it): the form's `approve` switch is off until moved, so Submit alone would decline."""
    from payflow.acts.auth import redeem_code
    from payflow.acts.decide import decide

    if isinstance(approval_status(ledger, batch_id), Approved | Declined | Expired):
        return None
    reason = decline_reason.strip()
    if not approve and not reason:
        return DECLINE_NEEDS_REASON
    checker = redeem_code(ledger, batch_id, approval_code) if approval_code.strip() else None
    if checker is None:
        return needs_code(batch_id)
    try:
        decide(
            ledger,
            batch_id,
            checker,
            approve=approve,
            note=None if approve else reason,
            acknowledge_warnings=acknowledge_warnings,
            via="prefect",
        )
    except ApprovalRefused as exc:
        return str(exc)
    return None
