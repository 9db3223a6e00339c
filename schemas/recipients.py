"""A recipient's canonical form: one function per destination (design.md, invariant 11).

The canonical form is what identity compares: the derived externalId, the repeat check and
the report's recipient. It is never sent: the service gets the requisites exactly as written
(invariant 3). Forms the requisites rules accept for one recipient map to one text here, so
`79351230001`, `89351230001` and `9351230001` are one SBP phone. Text no form fits (a row
validation rejects) comes back trimmed, as written.

Import-light on purpose: payflow.model and the ledger migrations call it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Separators a person may type inside a number; only ever removed to compare, never to send.
_SEPARATORS = re.compile(r"[\s()+.\-]")
_DIGITS = re.compile(r"[0-9]+")
_RU_MOBILE = re.compile(r"(?:7|8)?(9[0-9]{9})")


def _digits(text: str) -> str | None:
    """The digits of `text` when only separators stand between them, else None."""
    bare = _SEPARATORS.sub("", text)
    return bare if _DIGITS.fullmatch(bare) and bare.isascii() else None


def sbp_phone(text: str) -> str:
    """A Russian mobile as 79XXXXXXXXX: 79..., 89... and 9... (ten digits) are one phone."""
    digits = _digits(text)
    found = _RU_MOBILE.fullmatch(digits) if digits is not None else None
    return f"7{found.group(1)}" if found else text.strip()


def account_number(text: str) -> str:
    """An account number as its digits."""
    digits = _digits(text)
    return digits if digits is not None else text.strip()


def wallet_phone(text: str) -> str:
    """A mobile-money wallet phone as its digits (international form, no plus)."""
    return account_number(text)


def email_address(text: str) -> str:
    """An e-mail address with its domain in lower case (the local part is the mailbox's own)."""
    local, at, domain = text.strip().rpartition("@")
    return f"{local}@{domain.lower()}" if at and local else text.strip()


# paymentType -> the canonical form of its requisites. One home: the columns table documents
# these (CANONICAL_FORMS), identity and repeats call canonical_requisites.
CANONICAL: dict[str, Callable[[str], str]] = {
    "SBP": sbp_phone,
    "SIM": wallet_phone,
    "BANK_ACCOUNT": account_number,
    "EMAIL": email_address,
}
# paymentType -> a full match of text its function returns unchanged: a million-row batch
# finds the rows already in canonical form in C and calls the function only for the others.
ALREADY_CANONICAL: dict[str, str] = {
    "SBP": r"79[0-9]{9}",
    "SIM": r"[0-9]+",
    "BANK_ACCOUNT": r"[0-9]+",
}
CANONICAL_FORMS: dict[str, str] = {
    "SBP": "`79XXXXXXXXX` (`89…` and ten digits `9…` are the same phone)",
    "SIM": "its digits",
    "BANK_ACCOUNT": "its digits",
    "EMAIL": "the domain in lower case",
}


def canonical_requisites(payment_type: str, requisites: str) -> str:
    """The canonical form of `requisites` for `payment_type` (any case); unknown types: trimmed."""
    form = CANONICAL.get(payment_type.strip().upper())
    return form(requisites) if form is not None else requisites.strip()
