"""The ledger: the source of truth for every row's state (SQLAlchemy + Alembic).

`Ledger.open(url)` migrates and returns the one object other layers call. Allowed state moves
live in `states.py`; see each module's docstring for how registering, claiming and recording
statuses stay correct with several workers.
"""

from payflow.ledger.approvals import ApprovalRecord, BatchFacts
from payflow.ledger.attempts import (
    RERUNNABLE_STATES,
    AttemptsOutcome,
    AttemptView,
    NewAttempt,
    ParentView,
)
from payflow.ledger.bulk import BulkOutcome, CreatedPayout
from payflow.ledger.counts import BatchCounts, CurrencyTotal
from payflow.ledger.findings import (
    BalanceLine,
    Detected,
    FindingEventView,
    FindingKind,
    FindingsSync,
    FindingState,
    FindingView,
    ServiceView,
    UnknownFinding,
)
from payflow.ledger.ledger import DEFAULT_LEASE_SECONDS, Ledger, utc_now
from payflow.ledger.moves import StatusUpdate
from payflow.ledger.records import (
    ClaimedPayout,
    ConflictRow,
    Disposition,
    IntakeWarning,
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
from payflow.ledger.repeats import REPEAT_WINDOW, HeldRow
from payflow.ledger.service_word import WordSource
from payflow.ledger.states import (
    FINAL_STATUSES,
    NOT_PAID_STATES,
    NOT_SENT_PREFIX,
    PENDING_STATES,
    SENT_STATES,
    TERMINAL_STATES,
    TO_SEND_STATES,
    TRANSITIONS,
    EventSource,
    IllegalTransition,
    RowState,
)
from payflow.ledger.totals import (
    PAID_OUTCOMES,
    MessageTotal,
    Movement,
    OutcomeTotal,
    PaidTotal,
    ReportLine,
    RowOutcome,
)
from payflow.ledger.unsent import UNSENT_WORDS, UnsentReason, UnsentTotal

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "FINAL_STATUSES",
    "NOT_PAID_STATES",
    "NOT_SENT_PREFIX",
    "PAID_OUTCOMES",
    "PENDING_STATES",
    "REPEAT_WINDOW",
    "RERUNNABLE_STATES",
    "SENT_STATES",
    "TERMINAL_STATES",
    "TO_SEND_STATES",
    "TRANSITIONS",
    "UNSENT_WORDS",
    "ApprovalRecord",
    "AttemptView",
    "AttemptsOutcome",
    "BalanceLine",
    "BatchCounts",
    "BatchFacts",
    "BulkOutcome",
    "ClaimedPayout",
    "ClaimedRefund",
    "ConflictRow",
    "CreatedPayout",
    "CreatedRefund",
    "CurrencyTotal",
    "Detected",
    "Disposition",
    "EventSource",
    "FindingEventView",
    "FindingKind",
    "FindingState",
    "FindingView",
    "FindingsSync",
    "HeldRow",
    "IllegalTransition",
    "IntakeWarning",
    "KnownRow",
    "LeaseLost",
    "Ledger",
    "LedgerError",
    "MessageTotal",
    "Movement",
    "NewAttempt",
    "OutcomeTotal",
    "PaidTotal",
    "ParentView",
    "PayoutRef",
    "RefundBook",
    "RefundRef",
    "RefundRegisterOutcome",
    "RefundRowView",
    "RegisterOutcome",
    "RejectedRefund",
    "RejectedRow",
    "ReportLine",
    "RowOutcome",
    "RowState",
    "RowView",
    "ServiceView",
    "StatusEventView",
    "StatusUpdate",
    "UnknownFinding",
    "UnknownPayout",
    "UnknownRefund",
    "UnsentReason",
    "UnsentTotal",
    "WordSource",
    "utc_now",
]
