"""Helpers for the paying and webhook tests: rows, a client bound to a sandbox, states."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from payflow.api import AsyncPayoutsClient
from payflow.http_pools import pooled_http_client
from payflow.ledger import Ledger
from payflow.model import PayoutInstruction
from payflow.sandbox import SandboxServer


@asynccontextmanager
async def make_client(
    server: SandboxServer, token: str | None = None, **options: Any
) -> AsyncIterator[AsyncPayoutsClient]:
    """An async client bound to `server` over the engine's pooled transport, short timeouts."""
    options.setdefault("max_in_flight", 32)
    options.setdefault("timeout", 5.0)
    async with (
        pooled_http_client(options["max_in_flight"]) as http,
        AsyncPayoutsClient(
            token or server.token, base_url=server.url, http_client=http, **options
        ) as c,
    ):
        yield c


def _digits_of(external_id: str) -> str:
    return str(int(hashlib.sha256(external_id.encode()).hexdigest(), 16))[-8:]


def row(external_id: str, row_number: int = 2, *, last4: str = "0001", **changes: object):
    """A valid XOF mobile-money payout whose requisites end in `last4` (the sandbox's outcome)."""
    base = PayoutInstruction(
        row_number=row_number,
        external_id=external_id,
        amount=Decimal(5 * (row_number % 200 + 1)),
        currency="XOF",
        payment_type="SIM",
        # The externalId's own digits keep recipients apart across tests and batches, so no
        # row is held as a repeat of another test's payout (ledger/repeats.py).
        requisites=f"22507{row_number % 10000:04d}{_digits_of(external_id)}{last4}",
        # The person too: a repeat is also the same userId or name paid the same amount.
        name=f"Awa Kone {_digits_of(external_id)}",
        user_id=f"user-{row_number}-{_digits_of(external_id)}",
        user_email="awa@example.org",
    )
    return base._replace(**changes)


def rows(
    prefix: str, count: int, *, last4: str = "0001", first_row: int = 2
) -> list[PayoutInstruction]:
    """`count` distinct rows with externalIds `prefix-<n>`, numbered from `first_row`."""
    return [row(f"{prefix}-{n}", n, last4=last4) for n in range(first_row, first_row + count)]


def unique(prefix: str = "b") -> str:
    """An id no other test uses, even on a shared database."""
    return f"{prefix}{secrets.token_hex(4)}"


def register(ledger: Ledger, instructions: list[PayoutInstruction], batch_id: str | None = None):
    """Register `instructions` as one batch; returns its id."""
    batch_id = batch_id or unique("batch-")
    ledger.register_batch(batch_id, "test.csv", instructions, [])
    return batch_id


def pay_state(sandbox: SandboxServer, ledger: Ledger, batch_id: str, out_dir: Path, **options: Any):
    """Run the pay flow here (on the test's Prefect server) against `sandbox`; its final state."""
    from payflow.flows.pay_batch import pay_batch

    return pay_batch(
        batch_id,
        out_dir=str(out_dir),
        api_url=sandbox.url,
        sandbox=True,
        ledger_url=ledger.url,
        poll_interval=0.3,
        return_state=True,
        **options,
    )


def states(ledger: Ledger, batch_id: str) -> dict[str, str]:
    """externalId -> state of every row of the batch."""
    return {
        view.external_id: view.state.value
        for view in ledger.batch_rows(batch_id)
        if view.external_id is not None
    }
