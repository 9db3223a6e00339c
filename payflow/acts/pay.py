"""Paying a batch: who starts a pay run is recorded, and the run pays only what the batch's
recorded terms allow. The gate itself is `payflow.approvals.approval_status` (the terms the
maker's submission recorded, the approvals given since), which the pay flow asks again before
its first payout wherever it runs; this act records who started the run and where."""

from __future__ import annotations

from payflow.acts.actor import Actor
from payflow.acts.register import ensure_terms
from payflow.approvals import Approved, Pending, Void, approval_status
from payflow.approvals.stops import ApprovalNeeded
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action

PAY_STARTED = "pay_started"
COMMAND_LINE = "on the command line"  # the detail of a run started by `payflow run` / `pay`


def start_paying(ledger: Ledger, batch_id: str, payer: Actor, *, where: str) -> bool:
    """Record that `payer` (an operator, or a named schedule) starts a pay run of the batch
    (`where`: which run, for the history) when its approval lets it pay now; False, nothing
    recorded, while it waits (the run stops at the gate, and says what it waits for)."""
    if payer.is_person:
        payer.require_operator("pays a batch")
    ensure_terms(ledger, batch_id)
    if not isinstance(approval_status(ledger, batch_id), Approved):
        return False
    record_action(ledger, payer.name, PAY_STARTED, batch_id, detail=where)
    return True


def approval_needed(ledger: Ledger, batch_id: str) -> ApprovalNeeded | None:
    """The stop a pay run of the batch, not waiting for approvals, would meet at its gate now
    (rows to send, approvals missing); None when the run would go past it or end otherwise
    (declined, expired: the run says so). Lets a command refuse before it loads Prefect."""
    if not ledger.batch_counts(batch_id).to_send:
        return None  # the gate is asked only before sending (flows/pay_batch.py)
    ensure_terms(ledger, batch_id)
    status = approval_status(ledger, batch_id)
    if isinstance(status, Pending | Void):
        return ApprovalNeeded.of(batch_id, status)
    return None
