"""The ledger: the source of truth for every row's state (SQLAlchemy + Alembic).

`Ledger.open(url)` migrates and returns the one object other layers call. Allowed state moves
live in `states.py`; see each module's docstring for how registering, claiming and recording
statuses stay correct with several workers.
"""

from payflow.ledger.bulk import BulkOutcome, CreatedPayout
from payflow.ledger.ledger import DEFAULT_LEASE_SECONDS, Ledger, utc_now
from payflow.ledger.records import (
    ClaimedPayout,
    ConflictRow,
    Disposition,
    KnownRow,
    LeaseLost,
    LedgerError,
    PayoutRef,
    RegisterOutcome,
    RejectedRow,
    RowView,
    StatusEventView,
    UnknownPayout,
)
from payflow.ledger.refund_book import RefundBook
from payflow.ledger.refund_records import (
    ClaimedRefund,
    CreatedRefund,
    RefundRef,
    RefundRegisterOutcome,
    RefundRowView,
    RejectedRefund,
    UnknownRefund,
)
from payflow.ledger.states import (
    FINAL_STATUSES,
    TERMINAL_STATES,
    TRANSITIONS,
    EventSource,
    IllegalTransition,
    RowState,
)

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "FINAL_STATUSES",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "BulkOutcome",
    "ClaimedPayout",
    "ClaimedRefund",
    "ConflictRow",
    "CreatedPayout",
    "CreatedRefund",
    "Disposition",
    "EventSource",
    "IllegalTransition",
    "KnownRow",
    "LeaseLost",
    "Ledger",
    "LedgerError",
    "PayoutRef",
    "RefundBook",
    "RefundRef",
    "RefundRegisterOutcome",
    "RefundRowView",
    "RegisterOutcome",
    "RejectedRefund",
    "RejectedRow",
    "RowState",
    "RowView",
    "StatusEventView",
    "UnknownPayout",
    "UnknownRefund",
    "utc_now",
]
