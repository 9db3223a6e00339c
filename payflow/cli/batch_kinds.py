"""Which kind of batch an id names, for the commands that act on one kind only.

A refund batch is registered in the same `batches` table as a payout batch, with no payouts, so
`payflow reconcile` read it as a payout batch with nothing to check (exit 0), `payflow approve`
as "already approved" and `payflow pay` as "0 rows sent"; a links batch read as no batch at all.
"""

from __future__ import annotations

from typing import Literal

from payflow.cli.app import fail
from payflow.ledger import Ledger
from payflow.settings import Settings

BatchKind = Literal["payout", "refund", "links"]
SHOWN_BY: dict[BatchKind, str] = {
    "payout": "`payflow status {}` shows it",
    "refund": "`payflow status {}` shows its refunds",
    "links": "`payflow links report {}` shows it",
}


def batch_kind(ledger: Ledger, batch_id: str) -> BatchKind | None:
    """The kind of batch `batch_id` is in the ledger, or None when there is no such batch."""
    from payflow.links.store import LinkStore

    # Refund and links batches first: `batch_exists` finds them too (their terms and approvals
    # are kept as a payout batch's).
    if ledger.refunds.batch_exists(batch_id):
        return "refund"
    if LinkStore(ledger.engine).batch_exists(batch_id):
        return "links"
    if ledger.batch_exists(batch_id):
        return "payout"
    return None


def require_batch(settings: Settings, ledger: Ledger, batch_id: str, wanted: BatchKind) -> None:
    """Stop (one line, exit 2) unless `batch_id` is a batch of the `wanted` kind in the ledger;
    a batch of another kind is named as such, with the command that shows it."""
    kind = batch_kind(ledger, batch_id)
    if kind == wanted:
        return
    if kind is None:
        fail(f"no batch {batch_id!r} in the ledger {settings.ledger_place}")
    fail(f"{batch_id} is a {kind} batch, not a {wanted} batch: {SHOWN_BY[kind].format(batch_id)}")


def require_payout_batch(settings: Settings, ledger: Ledger, batch_id: str) -> None:
    """`require_batch` of a payout batch: the commands about payouts (status, pay, approve...)."""
    require_batch(settings, ledger, batch_id, "payout")
