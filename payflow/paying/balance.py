"""The balance check before the first payout: a batch that would overdraw a currency stops."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from payflow.api import AsyncPayoutsClient
from payflow.schemas.iso4217 import amount_text


class InsufficientBalanceError(Exception):
    """The batch needs more than the balance holds in some currency; nothing was submitted."""

    def __init__(self, check: BalanceCheck) -> None:
        super().__init__(check.message)
        self.check = check


@dataclass(frozen=True, slots=True)
class Shortfall:
    """One currency the balance cannot cover."""

    currency: str
    needed: Decimal
    available: Decimal

    @property
    def missing(self) -> Decimal:
        """How much more the balance would need."""
        return self.needed - self.available


@dataclass(frozen=True, slots=True)
class BalanceCheck:
    """Outcome of comparing a batch's totals with the merchant balance."""

    known: bool  # False: the balance response carries no per-currency amounts
    shortfalls: tuple[Shortfall, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True unless a currency is known to be short (an unknown balance does not stop a run)."""
        return not self.shortfalls

    @property
    def message(self) -> str:
        """One line for the operator."""
        if not self.known:
            return "balance not checked: the balance response has no per-currency amounts"
        if not self.shortfalls:
            return "balance covers the batch"
        parts = [
            f"{s.currency} needs {amount_text(s.needed, s.currency)}, balance "
            f"{amount_text(s.available, s.currency)} (short {amount_text(s.missing, s.currency)})"
            for s in self.shortfalls
        ]
        return "balance too low, nothing submitted: " + "; ".join(parts)

    def raise_if_short(self) -> None:
        """Raise `InsufficientBalanceError` when a currency would be overdrawn."""
        if not self.ok:
            raise InsufficientBalanceError(self)


def compare_balance(
    totals_per_currency: Mapping[str, Decimal], available: Mapping[str, Decimal] | None
) -> BalanceCheck:
    """Pure comparison; a currency missing from a known balance counts as zero available."""
    if available is None:
        return BalanceCheck(known=False)
    by_code = {code.upper(): amount for code, amount in available.items()}
    shortfalls = tuple(
        Shortfall(currency.upper(), needed, by_code.get(currency.upper(), Decimal(0)))
        for currency, needed in sorted(totals_per_currency.items())
        if needed > by_code.get(currency.upper(), Decimal(0))
    )
    return BalanceCheck(known=True, shortfalls=shortfalls)


async def check_balance(
    client: AsyncPayoutsClient, totals_per_currency: Mapping[str, Decimal]
) -> BalanceCheck:
    """Fetch the merchant balance and compare it with what the batch will pay per currency."""
    balance = await client.get_balance()
    return compare_balance(totals_per_currency, balance.available_by_currency())
