"""Plain values the ledger takes and returns; no database types leak past the Ledger class."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from payflow.ledger.states import RowState
from payflow.model import PayoutInstruction


class Disposition(StrEnum):
    """What registering decided for one source row of a batch."""

    NEW = "NEW"  # first time this externalId was seen: a payout row was created
    ALREADY_KNOWN = "ALREADY_KNOWN"  # same externalId, same content: nothing is paid again
    CONFLICT = "CONFLICT"  # same externalId, other content: never paid
    REJECTED = "REJECTED"  # broke a rule in the file


# Rows whose payout is their own. A rejected or conflicting row may share its externalId with
# another batch's payout, whose currency and amount are not the row's: the report shows none.
OWN_PAYOUT = (Disposition.NEW.value, Disposition.ALREADY_KNOWN.value)


class LedgerError(Exception):
    """Root of the ledger's own errors (IllegalTransition stands apart in states.py)."""


class UnknownPayout(LedgerError):
    """No payout row matches the externalId or payout id (e.g. a webhook ahead of mark_created)."""


class LeaseLost(LedgerError):
    """The row is no longer claimed by this worker: another one took it over, so do not write."""


@dataclass(frozen=True, slots=True)
class RejectedRow:
    """A source row validation refused, with the reasons the operator will read."""

    row_number: int
    external_id: str | None
    reasons: list[str]
    currency: str | None = None  # the row's currency cell, when it is an ISO 4217 code
    amount: Decimal | None = None  # the row's amount cell, when it broke no rule
    payment_type: str | None = None  # the row's paymentType and name cells, as written
    name: str | None = None
    requisites_masked: str | None = None  # all but the last four characters masked, never whole


@dataclass(frozen=True, slots=True)
class IntakeWarning:
    """A warning validation gave the maker at upload, kept so a checker later reads it too;
    `row_number` 1 is the file as a whole (its header), `external_id` empty then."""

    row_number: int
    external_id: str
    column: str
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class KnownRow:
    """A row whose externalId and content the ledger already had: it pays nothing again."""

    row_number: int
    external_id: str
    state: RowState
    first_batch_id: str


@dataclass(frozen=True, slots=True)
class ConflictRow:
    """A row reusing a known externalId with other content: recorded, never paid."""

    row_number: int
    external_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class RegisterOutcome:
    """What `register_batch` did; rows an earlier call registered are only counted."""

    batch_id: str
    new: int = 0
    rejected: int = 0
    already_registered: int = 0
    already_known: list[KnownRow] = field(default_factory=list)
    conflicts: list[ConflictRow] = field(default_factory=list)
    held: int = 0  # rows moved to HELD as repeats by this call (see repeats.py)


@dataclass(frozen=True, slots=True)
class ClaimedPayout:
    """A row leased to one worker for submission; with `needs_resolution`, look it up first."""

    instruction: PayoutInstruction
    batch_id: str
    attempts: int
    lease_until: datetime
    needs_resolution: bool

    @property
    def external_id(self) -> str:
        """The key of the payout, sent as externalId on every attempt."""
        return self.instruction.external_id


@dataclass(frozen=True, slots=True)
class PayoutRef:
    """A payout's keys and where it stands, for tracking."""

    external_id: str
    payout_id: str | None
    state: RowState
    last_status_at: datetime | None
    next_poll_at: datetime | None


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """A registered batch as a list shows it: its id, file (and sheet), when and by whom."""

    batch_id: str
    source_name: str
    created_at: datetime
    made_by: str | None
    sheet: str | None = None

    @property
    def source(self) -> str:
        """`payouts.xlsx, sheet March`: two sheets of one workbook are two batches, and the
        file name alone reads the same for both."""
        return f"{self.source_name}, sheet {self.sheet}" if self.sheet else self.source_name


@dataclass(frozen=True, slots=True)
class RowView:
    """One source row of a batch for the report; `requisites` is NOT masked here."""

    row_number: int
    external_id: str | None
    disposition: Disposition
    state: RowState
    first_batch_id: str | None
    payout_id: str | None
    status_message: str | None
    amount: Decimal | None
    currency: str | None
    payment_type: str | None
    requisites: str | None
    corrected: bool
    attempts: int
    reasons: list[str]


@dataclass(frozen=True, slots=True)
class StatusEventView:
    """One line of a payout's history."""

    external_id: str
    from_state: RowState | None
    to_state: RowState
    source: str
    at: datetime
    status_message: str | None
