"""Helpers of the rerun tests: a batch paid for real against the sandbox, then inspected."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import httpx
from paying_support import make_client, register, row
from support.stats import sandbox_stats
from support.tracking import send_and_follow

from payflow.ledger import Ledger
from payflow.sandbox import SandboxServer

# Source rows 2.. end in these requisites: 2 COMPLETED, 3 "Recipient not found", 4 "Recipient
# account is blocked", 5 CANCELED, 6 stays PROCESSING, 7 "Recipient not found".
OUTCOMES = ("0001", "2222", "1111", "3333", "5555", "2222")


def paid_batch(
    sandbox: SandboxServer,
    ledger: Ledger,
    prefix: str,
    outcomes: tuple[str, ...] = OUTCOMES,
    amount: Decimal | None = None,
) -> str:
    """Register rows with these requisites endings, pay them, track until final (or stuck)."""
    same = {"amount": amount} if amount is not None else {}
    instructions = [
        row(f"{prefix}-{n}", n, last4=end, **same) for n, end in enumerate(outcomes, start=2)
    ]
    batch_id = register(ledger, instructions)

    async def pay() -> None:
        async with make_client(sandbox) as client:
            await send_and_follow(client, ledger, batch_id, "t")

    asyncio.run(pay())
    return batch_id


def posts(sandbox: SandboxServer) -> dict[str, int]:
    """externalId -> POSTs the sandbox received."""
    return dict(sandbox_stats(sandbox.url)["createAttempts"])


def correct_at_service(sandbox: SandboxServer, payout_id: str, status: str) -> None:
    """The platform's manual correction of a final payout (no webhook)."""
    response = httpx.post(
        f"{sandbox.url}/_sandbox/payouts/{payout_id}/status", json={"status": status}, timeout=10
    )
    response.raise_for_status()
