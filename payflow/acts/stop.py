"""Stopping a batch's pay runs: any signed-in operator may (stopping moves no money), and the
history names them; every row stays in the ledger as it is."""

from __future__ import annotations

from payflow.acts.actor import Actor
from payflow.ending import STOPPED
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action
from payflow.paying.stop import Stopped, stop_batch


def stop(ledger: Ledger, batch_id: str, by: Actor) -> Stopped:
    """Cancel every run of the batch on Prefect that is not over; record the stop as `by`'s when
    any was. NotAllowed for an actor who is no operator."""
    by.require_operator("stops a batch's pay runs")
    stopped = stop_batch(batch_id, by.name)
    if stopped.runs:
        record_action(ledger, by.name, STOPPED, batch_id, ", ".join(stopped.runs.values()))
    return stopped
