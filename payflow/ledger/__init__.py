"""The ledger: the source of truth for every row's state (SQLAlchemy + Alembic).

`Ledger.open(url)` migrates and returns the one object other layers call. Allowed state moves
live in `states.py`; see each module's docstring for how registering, claiming and recording
statuses stay correct with several workers.
"""

from payflow.ledger.approvals import ApprovalRecord, BatchFacts, RecentDuplicate
from payflow.ledger.attempts import (
    RERUNNABLE_STATES,
    AttemptsOutcome,
    AttemptView,
    NewAttempt,
)
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
    "RERUNNABLE_STATES",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "ApprovalRecord",
    "AttemptView",
    "AttemptsOutcome",
    "BatchFacts",
    "BulkOutcome",
    "ClaimedPayout",
    "ConflictRow",
    "CreatedPayout",
    "Disposition",
    "EventSource",
    "IllegalTransition",
    "KnownRow",
    "LeaseLost",
    "Ledger",
    "LedgerError",
    "NewAttempt",
    "PayoutRef",
    "RecentDuplicate",
    "RegisterOutcome",
    "RejectedRow",
    "RowState",
    "RowView",
    "StatusEventView",
    "UnknownPayout",
    "utc_now",
]
