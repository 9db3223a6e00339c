"""Reconciling a batch with the service: a signed-in operator's act, or a schedule's under its
own name (`deployment reconcile-pending`), never an OS account's as if it were a person. The
history and the report version it keeps name the same actor."""

from __future__ import annotations

from payflow.acts.actor import Actor, NotAllowed, system_actor
from payflow.api import AsyncPayoutsClient
from payflow.ledger import FindingState, Ledger
from payflow.ledger.actions import record_action
from payflow.reconcile import ReconcileOptions, ReconcileResult, reconcile_batch
from payflow.reconcile.run import Progress
from payflow.wording import counted

RECONCILED = "reconciled"


# A pay run whose embedded sandbox ends with it re-fetches its payouts first (the moves the
# sandbox still had due); nobody asked for that reconciliation: the run did.
SANDBOX_ENDING = system_actor("the pay run, before its embedded sandbox ended")


def scheduled(deployment: str) -> Actor:
    """The actor of an unattended reconciliation run by the named deployment (flow)."""
    return system_actor(f"deployment {deployment}")


def may_reconcile(by: Actor) -> None:
    """NotAllowed unless `by` is an operator or a named schedule."""
    if by.is_person:
        by.require_operator("reconciles a batch")
    elif not by.name.strip():
        raise NotAllowed("an unattended reconciliation needs a name")


async def reconcile(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    by: Actor,
    options: ReconcileOptions,
    progress: Progress | None = None,
) -> ReconcileResult:
    """Fetch every payout of the batch again, sync findings, and record who reconciled it (the
    report the caller writes next is kept as `by.name`'s); `progress` hears rows done."""
    may_reconcile(by)
    result = await reconcile_batch(client, ledger, batch_id, options, progress)
    still_open = sum(1 for f in ledger.findings(batch_id) if f.state == FindingState.OPEN)
    detail = (
        f"{counted(result.fetched, 'payout')} fetched, {counted(result.moved, 'row')} moved, "
        f"{counted(still_open, 'finding')} open"
    )
    if result.unanswered:
        detail += f", {result.unanswered} not answered"
    record_action(ledger, by.name, RECONCILED, batch_id, detail=detail)
    return result
