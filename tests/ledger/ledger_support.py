"""Helpers shared by the ledger tests: instructions, a settable clock, throwaway databases."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from payflow.model import PayoutInstruction


def _digits_of(external_id: str) -> str:
    # Twelve digits: with six, two of the hundreds of batches a session registers on one
    # PostgreSQL database met now and then (a row then HELD as a repeat, and a test's story
    # drawn over 39 payouts instead of 40 failed).
    return str(int(hashlib.sha256(external_id.encode()).hexdigest(), 16))[-12:]


def instruction(
    external_id: str, row_number: int = 2, amount: str = "100.00", **changes: object
) -> PayoutInstruction:
    """A valid SIM payout to a mobile wallet; override any field by keyword."""
    base = PayoutInstruction(
        row_number=row_number,
        external_id=external_id,
        amount=Decimal(amount),
        currency="XOF",
        payment_type="SIM",
        # Digits of the externalId keep recipients apart across tests sharing a PostgreSQL
        # database, so no row is held as another test's repeat (ledger/repeats.py).
        requisites=f"22507{row_number:08d}{_digits_of(external_id)}",
        # The person is as distinct as the requisites: a repeat is also the same userId or name
        # paid the same amount (invariant 11), whatever the requisites.
        name=f"Awa Kone {_digits_of(external_id)}",
        user_id=f"user-{row_number}-{_digits_of(external_id)}",
        service_id=7,
        user_email="awa@example.org",
    )
    return base._replace(**changes)  # type: ignore[arg-type]


def instructions(prefix: str, count: int, first_row: int = 2) -> list[PayoutInstruction]:
    """`count` distinct instructions with externalIds `prefix-<row>`."""
    return [
        instruction(f"{prefix}-{row}", row, amount=f"{row * 5}")
        for row in range(first_row, first_row + count)
    ]


def unique(prefix: str = "t") -> str:
    """A prefix no other test (or earlier session on the same PostgreSQL) uses."""
    return f"{prefix}{secrets.token_hex(4)}"


class FakeClock:
    """A clock tests move by hand, so leases expire without sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
