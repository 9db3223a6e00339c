"""Balance roll-forward: the merchant balance when paying started, plus what the batch's rows
did since, against the balance read at reconciliation.

Each recorded state change moves money the way the spec says: the amount is held on create,
debited on COMPLETED, released on FAILED, CANCELED and EXPIRED, and given back by a correction.
Other activity on the account moves the balance too: what other batches of this ledger moved
meanwhile is named and taken out of the drift; what is left (refunds, orders, fees, another
system) is unexplained, a question for a person, not proof of an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from payflow.api import AsyncPayoutsClient
from payflow.api.models import Balance
from payflow.ledger import BalanceLine, Ledger, RowState

PAYING = "paying"
RECONCILE = "reconcile"
DRIFT_CAVEAT = (
    "Other activity on the merchant account (other batches, refunds, orders, fees) also moves "
    "the balance; a drift is a question to check, not proof of an error."
)
S = RowState
_OPEN = (S.CREATED.value, S.PROCESSING.value)
_RELEASED = (S.FAILED.value, S.CANCELED.value, S.EXPIRED.value)

# (from, to) -> (change of available, change of held), per unit of the payout's amount.
EFFECTS: dict[tuple[str | None, str], tuple[int, int]] = {
    **{(S.SUBMITTING.value, to): (-1, 1) for to in _OPEN},
    (S.SUBMITTING.value, S.COMPLETED.value): (-1, 0),
    **{(before, S.COMPLETED.value): (0, -1) for before in _OPEN},
    **{(before, to): (1, -1) for before in _OPEN for to in _RELEASED},
    (S.COMPLETED.value, S.FAILED.value): (1, 0),
}
"""Moves not named here (SUBMITTING -> FAILED when adopted final, ledger-only moves) net to 0."""


def balance_lines(balance: Balance, taken_at: datetime) -> list[BalanceLine]:
    """Per-currency available and held from the response; held is None when it is not shown."""
    records = (balance.model_extra or {}).get("balances")
    lines: list[BalanceLine] = []
    if isinstance(records, list):
        for record in records:
            if isinstance(record, dict) and isinstance(record.get("currency"), str):
                lines.append(
                    BalanceLine(
                        record["currency"].upper(),
                        _amount(record.get("available")),
                        _amount(record.get("held")),
                        taken_at,
                    )
                )
        if lines:
            return lines
    available = balance.available_by_currency() or {}
    return [BalanceLine(c, a, None, taken_at) for c, a in sorted(available.items())]


def _amount(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, str | int | Decimal):
        return None
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return None
    return amount if amount.is_finite() else None


async def take_snapshot(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str, phase: str
) -> list[BalanceLine]:
    """Read GET /v1/merchants/balance and store it in the ledger for the batch."""
    balance = await client.get_balance()
    lines = balance_lines(balance, ledger.now())
    ledger.save_balance(batch_id, phase, lines)
    return lines


@dataclass(frozen=True, slots=True)
class RollForward:
    """One currency: start + the batch's movements = expected; actual - expected = drift."""

    currency: str
    start_available: Decimal | None
    start_held: Decimal | None
    moved_available: Decimal
    moved_held: Decimal
    end_available: Decimal | None
    end_held: Decimal | None
    # Other batches of this ledger that moved the available balance meanwhile: (batch, amount).
    other_batches: tuple[tuple[str, Decimal], ...] = ()

    @property
    def other_available(self) -> Decimal:
        """What other batches of this ledger moved the available balance by meanwhile."""
        return sum((amount for _, amount in self.other_batches), Decimal(0))

    @property
    def unexplained_available(self) -> Decimal | None:
        """The drift less what other batches of this ledger explain; None when unknown."""
        drift = self.drift_available
        return None if drift is None else drift - self.other_available

    @property
    def expected_available(self) -> Decimal | None:
        """Start plus the batch's movements; None without a start snapshot."""
        return None if self.start_available is None else self.start_available + self.moved_available

    @property
    def expected_held(self) -> Decimal | None:
        """Start held plus the batch's holds and releases."""
        return None if self.start_held is None else self.start_held + self.moved_held

    @property
    def drift_available(self) -> Decimal | None:
        """Read at reconciliation minus expected; None when either is unknown."""
        if self.end_available is None or self.expected_available is None:
            return None
        return self.end_available - self.expected_available

    @property
    def drift_held(self) -> Decimal | None:
        """Held read at reconciliation minus expected held."""
        if self.end_held is None or self.expected_held is None:
            return None
        return self.end_held - self.expected_held


def roll_forward(ledger: Ledger, batch_id: str) -> list[RollForward]:
    """Per currency of the batch: first paying snapshot, movements since, last reconcile one."""
    start = {line.currency: line for line in ledger.balance_snapshot(batch_id, PAYING, first=True)}
    end = {
        line.currency: line for line in ledger.balance_snapshot(batch_id, RECONCILE, first=False)
    }
    if not start:
        return []
    since = min(line.taken_at for line in start.values())
    until = max(line.taken_at for line in end.values()) if end else ledger.now()
    others: dict[str, dict[str, Decimal]] = {}
    for other in ledger.other_movements(batch_id, since, until):
        d_available, _ = EFFECTS.get((other.from_state, other.to_state), (0, 0))
        if d_available:
            by_batch = others.setdefault(other.currency, {})
            by_batch[other.batch_id] = by_batch.get(other.batch_id, Decimal(0)) + (
                d_available * other.amount
            )
    moved: dict[str, list[Decimal]] = {}
    for movement in ledger.movements_since(batch_id, since):
        d_available, d_held = EFFECTS.get((movement.from_state, movement.to_state), (0, 0))
        totals = moved.setdefault(movement.currency, [Decimal(0), Decimal(0)])
        totals[0] += d_available * movement.amount
        totals[1] += d_held * movement.amount
    currencies = sorted(moved)  # the currencies this batch moved since paying started
    result = []
    for currency in currencies:
        first, last = start.get(currency), end.get(currency)
        moved_available, moved_held = moved.get(currency, [Decimal(0), Decimal(0)])
        # A currency the balance does not list holds nothing (the sandbox lists only some).
        absent = Decimal(0) if end else None
        result.append(
            RollForward(
                currency,
                first.available if first else Decimal(0),
                first.held if first else Decimal(0),
                moved_available,
                moved_held,
                last.available if last else absent,
                last.held if last else absent,
                tuple(sorted((b, a) for b, a in others.get(currency, {}).items() if a)),
            )
        )
    return result
