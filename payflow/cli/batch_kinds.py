"""Which kind of batch an id names, for the commands that act on payout batches only.

A refund batch is registered in the same `batches` table as a payout batch, with no payouts, so
`payflow reconcile` read it as a payout batch with nothing to check (exit 0), `payflow approve`
as "already approved" and `payflow pay` as "0 rows sent"; a links batch read as no batch at all.
"""

from __future__ import annotations

from payflow.cli.app import fail
from payflow.ledger import Ledger
from payflow.settings import Settings


def require_payout_batch(settings: Settings, ledger: Ledger, batch_id: str) -> None:
    """Stop (one line, exit 2) unless `batch_id` is a payout batch of the ledger; a refund or
    links batch is named as such, with the command that shows it."""
    from payflow.links.store import LinkStore

    if ledger.refunds.batch_exists(batch_id):
        fail(
            f"{batch_id} is a refund batch, not a payout batch: "
            f"`payflow status {batch_id}` shows its refunds"
        )
    if ledger.batch_exists(batch_id):
        return
    if LinkStore(ledger.engine).batch_exists(batch_id):
        fail(
            f"{batch_id} is a links batch, not a payout batch: "
            f"`payflow links report {batch_id}` shows it"
        )
    fail(f"no batch {batch_id!r} in the ledger {settings.ledger_place}")
