"""Plain values of the refunds part of the ledger; no database types leak past RefundBook."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from payflow.ledger.records import ConflictRow, Disposition, KnownRow, LedgerError
from payflow.ledger.states import RowState
from payflow.model import RefundInstruction


class UnknownRefund(LedgerError):
    """No refund row matches the externalId or refund id (not ours, or ahead of mark_created)."""


@dataclass(frozen=True, slots=True)
class ClaimedRefund:
    """A refund row leased to one worker; with `needs_resolution`, look it up before any POST."""

    instruction: RefundInstruction
    attempts: int
    lease_until: datetime
    needs_resolution: bool

    @property
    def external_id(self) -> str:
        """The key sent as externalId on every attempt."""
        return self.instruction.external_id


@dataclass(frozen=True, slots=True)
class CreatedRefund:
    """What the service answered (or a lookup found) for one refund."""

    refund_id: str
    status: str
    debit_amount: Decimal | None = None
    debit_currency: str | None = None
    debit_basis: str | None = None
    status_message: str | None = None


@dataclass(frozen=True, slots=True)
class RefundRef:
    """A refund's keys and where it stands, for tracking."""

    external_id: str
    refund_id: str | None
    order_id: str
    state: RowState
    order_status: str | None


@dataclass(frozen=True, slots=True)
class RefundRowView:
    """One source row of a refund batch for the report."""

    row_number: int
    external_id: str | None
    order_id: str | None
    disposition: Disposition
    state: RowState
    refund_id: str | None
    amount: Decimal | None
    currency: str | None
    debit_amount: Decimal | None
    debit_currency: str | None
    debit_basis: str | None
    status_message: str | None
    order_status: str | None
    corrected: bool
    first_batch_id: str | None
    reasons: list[str]


@dataclass(frozen=True, slots=True)
class RejectedRefund:
    """A refund row the checks refused, with the order it named and the operator's reasons."""

    row_number: int
    external_id: str | None
    order_id: str | None
    reasons: list[str]


@dataclass(frozen=True, slots=True)
class RefundRegisterOutcome:
    """What registering a refund batch did; a batch registered before is only counted."""

    batch_id: str
    new: int = 0
    rejected: int = 0
    already_registered: int = 0
    already_known: list[KnownRow] = field(default_factory=list)
    conflicts: list[ConflictRow] = field(default_factory=list)
