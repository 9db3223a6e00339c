"""What the links part passes around: a validated link row, claims, and a row as reported."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from payflow.ledger.states import RowState
from payflow.model import canonical_amount

CURRENCY = "RUB"  # the widget pays rubles only
NO_PAYOUT_YET = "no payout yet"


def status_label(state: str) -> str:
    """A link row's ledger state as the operator reads it: VALIDATED means the recipient made
    no payout yet (the ledger's "checked, nothing sent" says nothing about a link)."""
    return NO_PAYOUT_YET if state == RowState.VALIDATED else state


@dataclass(frozen=True, slots=True)
class LinksBatchLine:
    """A links batch as a list of batches shows it: its file, when, and rows per state."""

    batch_id: str
    source_name: str
    created_at: datetime
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class LinkRow:
    """One valid row of a links file: a payout the recipient will create through the widget."""

    row_number: int
    external_id: str
    user_id: str
    amount: Decimal
    service_id: int | None = None

    def content_hash(self) -> str:
        """Same externalId with another hash is a CONFLICT, never a second link."""
        parts = (self.user_id, canonical_amount(self.amount), CURRENCY, str(self.service_id or ""))
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class IssuedClaim:
    """A fresh claim: the token exists only here and in the claims file, never in the ledger."""

    row_number: int
    external_id: str
    user_id: str
    amount: Decimal
    token: str
    expires_at: datetime

    def __repr__(self) -> str:  # the token must never reach a log through a repr
        return f"IssuedClaim(external_id={self.external_id!r}, expires_at={self.expires_at})"


class ClaimState(StrEnum):
    """Where a row's claims stand, as the links report shows it."""

    OPEN = "OPEN"  # a claim is valid and unused
    OPENED = "OPENED"  # the latest claim minted a widget link, no payout yet
    USED = "USED"  # the recipient created the payout
    EXPIRED_UNUSED = "EXPIRED_UNUSED"  # every claim expired and no payout exists


@dataclass(frozen=True, slots=True)
class LinkView:
    """A registered link row with its payout and claims, read from the ledger."""

    batch_id: str
    row_number: int
    external_id: str
    user_id: str
    amount: Decimal
    service_id: int | None
    state: RowState
    payout_id: str | None
    status_message: str | None
    corrected: bool
    links_minted: int
    claims: int
    claims_opened: int
    last_expires_at: datetime | None
    last_issued_at: datetime | None = None
    last_opened_at: datetime | None = None

    def claim_state(self, now: datetime) -> ClaimState:
        """USED once a payout exists; else by the latest claim's expiry and whether it opened."""
        if self.state is not RowState.VALIDATED:
            return ClaimState.USED
        if self.last_expires_at is None or self.last_expires_at <= now:
            return ClaimState.EXPIRED_UNUSED
        opened = (
            self.last_opened_at is not None
            and self.last_issued_at is not None
            and self.last_opened_at >= self.last_issued_at
        )
        return ClaimState.OPENED if opened else ClaimState.OPEN


@dataclass(frozen=True, slots=True)
class ClaimLookup:
    """What a claim token opens: its row, whether the claim has expired."""

    claim_id: int
    external_id: str
    user_id: str
    amount: Decimal
    service_id: int | None
    state: RowState
    payout_id: str | None
    expired: bool
    batch_id: str = ""  # the links batch, whose approval the claim server checks
