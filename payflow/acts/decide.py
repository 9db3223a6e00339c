"""A checker's approval or decline: the one place that records it, whatever the surface."""

from __future__ import annotations

from payflow.acts.actor import Actor, NotAllowed
from payflow.acts.register import ensure_terms
from payflow.approvals import ApprovalStatus, Approved, record_decision
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action


def decide(
    ledger: Ledger,
    batch_id: str,
    checker: Actor,
    *,
    approve: bool,
    note: str | None = None,
    acknowledge_warnings: bool = False,
    via: str,
) -> ApprovalStatus:
    """Record the checker's decision under the batch's recorded terms; the status after it.
    Refused (ApprovalRefused) for a non-checker, the batch's maker, a batch no signed-in maker
    submitted, and everything `record_decision` refuses."""
    checker.require("checker", "approves or declines a batch")
    terms = ensure_terms(ledger, batch_id)
    if approve and terms.maker is None:
        raise NotAllowed(
            f"batch {batch_id} has no signed-in maker (a deployed run registered it from a file "
            f"of no operator's OS account): a maker submits it first with "
            f"`payflow submit {batch_id}`"
        )
    status = record_decision(
        ledger,
        batch_id,
        approver=checker.name,
        decision="approve" if approve else "decline",
        note=note,
        acknowledge_warnings=acknowledge_warnings,
        via=via,
    )
    action = "approved" if isinstance(status, Approved) else "approval_step"
    record_action(ledger, checker.name, action if approve else "declined", batch_id, detail=note)
    return status
