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
from payflow.ledger.repeats import REPEAT_WINDOW, HeldRow
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
    "REPEAT_WINDOW",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "BulkOutcome",
    "ClaimedPayout",
    "ConflictRow",
    "CreatedPayout",
    "Disposition",
    "EventSource",
    "HeldRow",
    "IllegalTransition",
    "KnownRow",
    "LeaseLost",
    "Ledger",
    "LedgerError",
    "PayoutRef",
    "RegisterOutcome",
    "RejectedRow",
    "RowState",
    "RowView",
    "StatusEventView",
    "UnknownPayout",
    "utc_now",
]
