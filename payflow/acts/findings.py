"""Acknowledging a finding: a signed-in operator says they read it, with a note; the finding's
own history and the batch's history both name them."""

from __future__ import annotations

from payflow.acts.actor import Actor, NotAllowed
from payflow.ledger import FindingView, Ledger
from payflow.ledger.actions import record_action

ACKNOWLEDGED = "finding_acknowledged"


def acknowledge(
    ledger: Ledger, batch_id: str, finding_id: int, operator: Actor, note: str
) -> FindingView:
    """Record that `operator` read finding `finding_id` of the batch, and why it may stay;
    NotAllowed for an actor who is no operator or an empty note, UnknownFinding for an id the
    batch does not have."""
    operator.require_operator("acknowledges a finding")
    note = note.strip()
    if not note:
        raise NotAllowed("an acknowledgement needs a note saying why (--note TEXT)")
    finding = ledger.acknowledge_finding(batch_id, finding_id, actor=operator.name, note=note)
    row = f" (row {finding.row_number})" if finding.row_number else ""
    detail = f"#{finding_id} {finding.kind}{row}: {note}"
    record_action(ledger, operator.name, ACKNOWLEDGED, batch_id, detail=detail)
    return finding
