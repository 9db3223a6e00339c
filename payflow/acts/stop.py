"""Stopping a batch's pay runs: any signed-in operator may (stopping moves no money), and the
history names them; every row stays in the ledger as it is."""

from __future__ import annotations

from datetime import timedelta

from payflow.acts.actor import Actor
from payflow.ledger import Ledger
from payflow.paying.stop import Stopped, stop_batch


def stop(ledger: Ledger, batch_id: str, by: Actor, stale_after: timedelta) -> Stopped:
    """Cancel every run of the batch on Prefect that is not over and record the stop as `by`'s
    (`stop_batch`: also when Prefect is down and a pay run of it beats in the ledger, which
    reads the stop there). NotAllowed for an actor who is no operator."""
    by.require_operator("stops a batch's pay runs")
    return stop_batch(ledger, batch_id, by.name, stale_after)
