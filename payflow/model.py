"""Plain data shared by every layer: the instruction to pay one row, and how it is fingerprinted.

Nothing here talks to the network, the ledger or Prefect, so every layer may import it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import NamedTuple

from payflow.schemas.recipients import canonical_requisites

# The externalId payflow derives for a row that has none starts so (payflow.intake.identity).
# Kept here, not there: the approval rules look derived ids up, and identity.py imports pandas,
# which a command or pay run that reads no file should not load.
DERIVED_PREFIX = "pf-"

# Validation's warnings that the approval rules read back from the ledger (same reason).
AMOUNT_OUTLIER = "amount_outlier"
DOUBLE_PAYMENT = "possible_double_payment"


class PaymentType(StrEnum):
    SBP = "SBP"
    SIM = "SIM"
    BANK_ACCOUNT = "BANK_ACCOUNT"
    EMAIL = "EMAIL"


class PayoutInstruction(NamedTuple):
    """One validated batch row, ready to become a POST /v1/payouts request.

    Immutable; `_replace(**changes)` gives a changed copy. A NamedTuple, not a frozen dataclass:
    validation builds one per row, and a million of them took 2.1 s frozen, under 1 s as tuples."""

    row_number: int  # spreadsheet row the operator sees (header is row 1)
    external_id: str
    amount: Decimal
    currency: str
    payment_type: str
    requisites: str
    name: str
    user_id: str
    service_id: int | None = None
    bank_name: str | None = None  # for SBP: the bank id from the banks list, after resolution
    note: str | None = None
    user_email: str | None = None
    user_phone: str | None = None
    user_ip: str | None = None
    callback_url: str | None = None

    def content_hash(self) -> str:
        """Fingerprint of what is paid to whom: equal hashes are the same payout (invariant 2)."""
        return content_hash(
            amount=self.amount,
            currency=self.currency,
            payment_type=self.payment_type,
            requisites=self.requisites,
            bank_name=self.bank_name,
            service_id=self.service_id,
            name=self.name,
            user_id=self.user_id,
        )

    def repeat_key(self) -> str:
        """Fingerprint of recipient (canonical requisites), amount and currency: the same payout
        under any externalId, however its phone or e-mail was written."""
        requisites = canonical_requisites(self.payment_type, self.requisites)
        return repeat_key(requisites=requisites, amount=self.amount, currency=self.currency)

    def user_key(self) -> str | None:
        """Fingerprint of the person by userId, amount and currency (None without a userId)."""
        return person_key("userId", self.user_id, self.amount, self.currency)

    def name_key(self) -> str | None:
        """Fingerprint of the person by name, amount and currency (None without a name)."""
        return person_key("name", self.name, self.amount, self.currency)


def repeat_key(*, requisites: str, amount: Decimal, currency: str) -> str:
    """SHA-256 over the recipient's requisites (callers pass their canonical form), the
    canonical amount and the currency."""
    canonical = json.dumps(
        [requisites.strip(), canonical_amount(amount), currency.strip().upper()],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def person_key(kind: str, who: str | None, amount: Decimal, currency: str) -> str | None:
    """SHA-256 over who is paid (a userId as written, or a name in any case and spacing), the
    canonical amount and the currency: the same person paid the same, whatever the requisites
    (design.md, invariant 11). None when `who` is blank: nobody to compare."""
    text = " ".join((who or "").split())
    if kind == "name":
        text = text.casefold()
    if not text:
        return None
    canonical = json.dumps(
        [kind, text, canonical_amount(amount), currency.strip().upper()],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def canonical_amount(amount: Decimal) -> str:
    """Text of an amount that does not depend on how it was written (10, 10.0 and 10.00 agree)."""
    if amount == amount.to_integral_value():
        return str(amount.quantize(Decimal(1)))
    return format(amount.normalize(), "f")


def content_hash(
    *,
    amount: Decimal,
    currency: str,
    payment_type: str,
    requisites: str,
    bank_name: str | None,
    service_id: int | None,
    name: str,
    user_id: str,
) -> str:
    """SHA-256 over the fields that decide where money goes and how much."""
    canonical = json.dumps(
        [
            canonical_amount(amount),
            currency.upper(),
            payment_type.upper(),
            requisites,
            bank_name or "",
            service_id if service_id is not None else "",
            name,
            user_id,
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# -- refunds (issue 11) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RefundInstruction:
    """One checked refund row, ready to become a POST /v1/refunds request.

    `amount` and `currency` are the order's (checked against the service before registering);
    `amount_given` says whether the file named the amount, so the request sends it only then."""

    row_number: int
    external_id: str
    order_id: str
    amount: Decimal
    currency: str
    amount_given: bool = False
    reason: str | None = None
    callback_url: str | None = None

    def content_hash(self) -> str:
        """Fingerprint of what is refunded: the order and its amount (invariant 2 for refunds)."""
        canonical = json.dumps(
            ["refund", self.order_id.lower(), canonical_amount(self.amount)],
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
