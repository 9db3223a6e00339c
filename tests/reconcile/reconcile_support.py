"""Pay a small batch against a real sandbox, then reconcile it, as the pay flow will."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger, RejectedRow
from payflow.model import PayoutInstruction
from payflow.paying import submit_batch, track_batch
from payflow.reconcile import PAYING, ReconcileOptions, reconcile_batch, take_snapshot
from payflow.sandbox import SandboxServer

QUIET = ReconcileOptions(stuck_after={"*": timedelta(hours=1)}, concurrency=4)


def instruction(external_id: str, row_number: int, last4: str, **changes: Any) -> PayoutInstruction:
    """An XOF mobile-money row; the requisites' last four digits choose the sandbox outcome."""
    fields: dict[str, Any] = {
        "row_number": row_number,
        "external_id": external_id,
        "amount": Decimal(5 * row_number),
        "currency": "XOF",
        "payment_type": "SIM",
        "requisites": f"2250700{row_number:02d}{last4}",
        # One person per externalId: a repeat is also the same userId or name paid the same.
        "name": f"Awa Kone {external_id}",
        "user_id": f"user-{external_id}",
    }
    fields.update(changes)
    return PayoutInstruction(**fields)


def new_id(prefix: str) -> str:
    """An id no other test uses."""
    return f"{prefix}-{secrets.token_hex(3)}"


def register(
    ledger: Ledger, rows: list[PayoutInstruction], rejected: list[RejectedRow] | None = None
) -> str:
    """Register the rows as a new batch; returns its id."""
    batch_id = new_id("batch")
    ledger.register_batch(batch_id, "test.csv", rows, rejected or [])
    return batch_id


async def pay(client: AsyncPayoutsClient, ledger: Ledger, batch_id: str) -> None:
    """Snapshot the balance, submit every row and wait until each is final (or 3 s pass)."""
    await take_snapshot(client, ledger, batch_id, PAYING)
    await submit_batch(client, ledger, batch_id, worker_id="w", chunk_size=50, callback_url=None)
    await track_batch(client, ledger, batch_id, deadline=3.0, poll_interval=0.05, quiet_period=0)


async def reconcile(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str, options: ReconcileOptions = QUIET
) -> set[tuple[int, str]]:
    """Reconcile and return the (row, kind) of every finding not resolved."""
    await reconcile_batch(client, ledger, batch_id, options)
    return {(f.row_number, f.kind) for f in ledger.findings(batch_id) if f.state != "resolved"}


def move(server: SandboxServer, payout_id: str, **body: Any) -> None:
    """Move a payout at the sandbox later (test-only route)."""
    httpx.post(f"{server.url}/_sandbox/payouts/{payout_id}/status", json=body).raise_for_status()


def payout_id(ledger: Ledger, batch_id: str, row_number: int) -> str:
    """The service's id of a row's payout."""
    found = next(r for r in ledger.batch_rows(batch_id) if r.row_number == row_number)
    assert found.payout_id is not None
    return found.payout_id
