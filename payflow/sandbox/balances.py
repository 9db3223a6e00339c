"""The merchant's money per currency: available and held; payouts and refunds hold first."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from payflow.sandbox.errors import conflict
from payflow.sandbox.validation import format_amount

ZERO = Decimal(0)


class Balances:
    """Available and held amounts per currency; only touched from the app's event loop."""

    def __init__(self, initial: Mapping[str, Decimal]) -> None:
        self._available: dict[str, Decimal] = {c.upper(): Decimal(v) for c, v in initial.items()}
        self._held: dict[str, Decimal] = dict.fromkeys(self._available, ZERO)

    def available(self, currency: str) -> Decimal:
        """What can still be held or paid in `currency`."""
        return self._available.get(currency, ZERO)

    def held(self, currency: str) -> Decimal:
        """What is held for payouts and refunds not yet final."""
        return self._held.get(currency, ZERO)

    def hold(self, currency: str, amount: Decimal, what: str) -> None:
        """Move `amount` from available to held, or refuse with 409 INSUFFICIENT_BALANCE."""
        if self.available(currency) < amount:
            raise conflict(
                "INSUFFICIENT_BALANCE",
                f"balance {currency} {self.available(currency)} does not cover the {what}",
            )
        self._available[currency] = self.available(currency) - amount
        self._held[currency] = self.held(currency) + amount

    def release(self, currency: str, amount: Decimal) -> None:
        """Return a held amount to available (FAILED, CANCELED, EXPIRED)."""
        self._held[currency] = self.held(currency) - amount
        self._available[currency] = self.available(currency) + amount

    def debit(self, currency: str, amount: Decimal) -> None:
        """Spend a held amount (COMPLETED)."""
        self._held[currency] = self.held(currency) - amount

    def credit(self, currency: str, amount: Decimal) -> None:
        """Add to available (a paid order, or a debit the platform gave back)."""
        self._available[currency] = self.available(currency) + amount
        self._held.setdefault(currency, ZERO)

    def as_json(self) -> list[dict[str, Any]]:
        """`[{"currency", "available", "held"}]`, amounts as strings."""
        return [
            {
                "currency": c,
                "available": format_amount(self.available(c)),
                "held": format_amount(self.held(c)),
            }
            for c in sorted(self._available)
        ]
