"""The destination rules table (`payflow/defaults/destination_rules.csv`) as typed records.

One row per destination and currency says which requisites rule applies, which country codes a
wallet phone may start with, the amount step, optional limits, and whether a bank id is needed.
A row with a `service_id`, or with no requisites rule, carries only amount limits: of that payout
service, or of the destination and currency (`*`: any currency). Enabling a new destination
is a new row here (plus its requisites rule in `payflow.schemas.requisites` if it is new).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path

from payflow.defaults import DESTINATION_RULES, default_file
from payflow.schemas.requisites import REQUISITES_RULES

ANY_CURRENCY = "*"


class RulesTableError(ValueError):
    """The rules table itself is wrong (a programming or configuration error, not a bad batch)."""


@dataclass(frozen=True)
class DestinationRule:
    """What a row of one paymentType and currency must satisfy."""

    payment_type: str
    currency: str  # ISO 4217 code, or "*" for any
    requisites_rule: str
    phone_prefixes: tuple[str, ...]
    amount_step_cents: int
    bank_id_required: bool
    by_agreement: bool
    note: str


@dataclass(frozen=True)
class AmountLimit:
    """Optional bounds for a destination, currency or service; None means unbounded."""

    payment_type: str
    currency: str
    service_id: int | None
    min_cents: int | None
    max_cents: int | None


@dataclass(frozen=True)
class RulesTable:
    """All destination rules and amount limits of one table file."""

    destinations: tuple[DestinationRule, ...]
    limits: tuple[AmountLimit, ...]

    @property
    def payment_types(self) -> frozenset[str]:
        """Every paymentType the table knows."""
        return frozenset(d.payment_type for d in self.destinations)


def to_cents(text: str, *, where: str) -> int:
    """Exact cents of a table amount such as `0.01` or `5`."""
    try:
        value = Decimal(text) * 100
    except InvalidOperation:
        raise RulesTableError(f"{where}: {text!r} is not an amount") from None
    if value != value.to_integral_value() or value < 0:
        raise RulesTableError(f"{where}: {text!r} must be non-negative with at most 2 decimals")
    return int(value)


def _optional_cents(text: str, where: str) -> int | None:
    return to_cents(text, where=where) if text.strip() else None


def _parse_row(row: dict[str, str], line: int) -> DestinationRule:
    where = f"rules table line {line}"
    rule = row["requisites_rule"].strip()
    if rule not in REQUISITES_RULES:
        raise RulesTableError(f"{where}: unknown requisites rule {rule!r}")
    step = to_cents(row["amount_step"].strip() or "0.01", where=where)
    if step <= 0:
        raise RulesTableError(f"{where}: amount_step must be positive")
    return DestinationRule(
        payment_type=row["payment_type"].strip(),
        currency=row["currency"].strip(),
        requisites_rule=rule,
        phone_prefixes=tuple(row["phone_prefixes"].split()),
        amount_step_cents=step,
        bank_id_required=row["bank_id_required"].strip().lower() == "yes",
        by_agreement=row["by_agreement"].strip().lower() == "yes",
        note=row["note"].strip(),
    )


def load_rules(path: Path | None = None) -> RulesTable:
    """The rules table at `path`, else the shipped default; loaded and checked once per file."""
    return _rules_at(path) if path else _default_rules()


@cache
def _default_rules() -> RulesTable:
    return parse_rules(default_file(DESTINATION_RULES))


@cache
def _rules_at(path: Path) -> RulesTable:
    return parse_rules(path)


def parse_rules(path: Traversable) -> RulesTable:
    """Read and check one rules table file (RulesTableError naming the line)."""
    destinations: list[DestinationRule] = []
    limits: list[AmountLimit] = []
    text = io.StringIO(path.read_bytes().decode("utf-8"), newline="")
    for line, row in enumerate(csv.DictReader(text), start=2):
        where = f"rules table line {line}"
        service = row["service_id"].strip()
        if not service and row["requisites_rule"].strip():
            destinations.append(_parse_row(row, line))
        low = _optional_cents(row["min_amount"], where)
        high = _optional_cents(row["max_amount"], where)
        if low is None and high is None:
            continue
        limits.append(
            AmountLimit(
                payment_type=row["payment_type"].strip(),
                currency=row["currency"].strip() or ANY_CURRENCY,
                service_id=int(service) if service else None,
                min_cents=low,
                max_cents=high,
            )
        )
    keys = [(d.payment_type, d.currency) for d in destinations]
    if len(keys) != len(set(keys)):
        raise RulesTableError(f"{path.name}: a paymentType and currency pair appears twice")
    return RulesTable(tuple(destinations), tuple(limits))
