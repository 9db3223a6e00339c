"""Releasing a batch's rows held as repeats (`--allow-repeat`): the operator's act, named in the
batch's history. It moves no money by itself: a released repeat is a warning a second person
approves before it pays (`approvals.requirement`)."""

from __future__ import annotations

from payflow.acts.actor import Actor
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action
from payflow.wording import counted

REPEATS_ALLOWED = "repeats allowed"


def allow_repeats(ledger: Ledger, batch_id: str, by: Actor) -> int:
    """Release the batch's HELD repeats as `by`'s act; how many rows were released. The history
    records who, once per release that moved a row."""
    released = ledger.acknowledge_repeats(batch_id)
    if released:
        detail = f"{counted(released, 'row')} held as repeats released (--allow-repeat)"
        record_action(ledger, by.name, REPEATS_ALLOWED, batch_id, detail=detail)
    return released
