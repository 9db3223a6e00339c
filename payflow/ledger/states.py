"""Row states and the one table of allowed moves between them (invariant 5).

Every write to `payouts.state` goes through `check_move`, so this module is the only place that
decides what may follow what. A status that equals or lies behind the current one is *stale*
(duplicate or late webhook): the caller ignores it. A move nobody allowed is *illegal* and raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum


class RowState(StrEnum):
    """Where one row of a batch stands: ledger-only states, then the service's statuses.

    Payouts use CREATED..EXPIRED; refunds use PENDING, MANUAL, COMPLETED, FAILED, CANCELED."""

    VALIDATED = "VALIDATED"  # registered, never sent
    REJECTED = "REJECTED"  # broke a rule in the file; only ever a batch_rows disposition
    SUBMITTING = "SUBMITTING"  # claimed by a worker; a POST may be in flight
    CREATED = "CREATED"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"
    EXPIRED = "EXPIRED"
    CONFLICT = "CONFLICT"  # same externalId, other content: never paid
    SUBMIT_REJECTED = "SUBMIT_REJECTED"  # the service refused the POST (4xx): nothing was created
    PENDING = "PENDING"  # refunds: created at the provider, debit held
    MANUAL = "MANUAL"  # refunds: processed by the platform by hand, debit held
    # Same recipient, amount and currency paid or in flight under another externalId within
    # 30 days: never sent until an operator acknowledges it (`payflow run --allow-repeat`).
    HELD = "HELD"


NOT_SENT_PREFIX = "not sent: "  # a VALIDATED row's message after the service refused each POST


class EventSource(StrEnum):
    """Who moved a row, as written to `status_events.source`."""

    SUBMIT = "submit"
    RESOLVE = "resolve"
    WEBHOOK = "webhook"
    POLL = "poll"
    REVIEW = "review"  # a repeat held back, or released by an operator's acknowledgement


class Move(Enum):
    """What recording a new state over the current one amounts to."""

    APPLY = "apply"
    STALE = "stale"


class IllegalTransition(Exception):
    """A state change the transitions table does not allow (a bug or a surprise from the API)."""

    def __init__(self, external_id: str, current: RowState, new: RowState) -> None:
        super().__init__(f"illegal transition {current} -> {new} for externalId {external_id!r}")
        self.external_id = external_id
        self.current = current
        self.new = new


S = RowState
FINAL_STATUSES = frozenset({S.COMPLETED, S.FAILED, S.CANCELED, S.EXPIRED})
"""Final statuses of the service (COMPLETED only changes by the platform's manual correction)."""

TERMINAL_STATES = FINAL_STATUSES | {S.REJECTED, S.CONFLICT, S.SUBMIT_REJECTED}
"""States after which the pipeline has nothing left to do for the row."""

UNFINISHED_STATES = frozenset({S.VALIDATED, S.SUBMITTING, S.CREATED, S.PROCESSING})
POLLABLE_STATES = frozenset({S.CREATED, S.PROCESSING})
TO_SEND_STATES = frozenset({S.VALIDATED, S.SUBMITTING})
"""Rows no payout is known for yet: what a batch still has to pay (SUBMITTING is resolved first)."""

MAY_SEND_STATES = TO_SEND_STATES | {S.HELD}
"""Rows a batch may still send: no payout known yet, or held as a repeat until released."""

PENDING_STATES = frozenset({S.SUBMITTING}) | POLLABLE_STATES
"""Rows that may already have a payout which is not final yet."""

SENT_STATES = POLLABLE_STATES | FINAL_STATUSES | {S.SUBMIT_REJECTED}
"""Rows the service has answered for: a payout exists, or the POST was refused."""

NOT_PAID_STATES = frozenset({S.FAILED, S.CANCELED, S.EXPIRED, S.SUBMIT_REJECTED})
"""Rows that ended without money reaching the recipient; never sent again automatically."""
API_STATUSES = frozenset({S.CREATED, S.PROCESSING}) | FINAL_STATUSES
"""The values `record_status` and `mark_created` accept from the service."""

TRANSITIONS: dict[RowState, frozenset[RowState]] = {
    # -> SUBMIT_REJECTED: a row registered without its bank or service checked (a maker's
    # process holds no API token) that the paying process checked and found wrong, unsent.
    S.VALIDATED: frozenset({S.SUBMITTING, S.HELD, S.SUBMIT_REJECTED}),
    S.HELD: frozenset({S.VALIDATED}),
    # SUBMITTING -> VALIDATED only after a lookup by externalId said 404 (safe to retry);
    # -> a final status when the lookup adopted a payout that already finished.
    S.SUBMITTING: frozenset(
        {S.CREATED, S.PROCESSING, S.SUBMIT_REJECTED, S.CONFLICT, S.VALIDATED} | FINAL_STATUSES
    ),
    S.CREATED: frozenset({S.PROCESSING}) | FINAL_STATUSES,
    S.PROCESSING: FINAL_STATUSES,
    # The platform's manual correction after a bank-side error (flagged `corrected`).
    S.COMPLETED: frozenset({S.FAILED}),
}

CORRECTIONS = frozenset({(S.COMPLETED, S.FAILED)})
"""Moves out of a final status: allowed, but flagged and shown in the report."""

# How far along the service's lifecycle a state is; a status ranked at or below the current one
# is old news. Ledger-only states (VALIDATED, SUBMITTING) rank below every service status.
_RANK: dict[RowState, int] = {
    S.VALIDATED: 0,
    S.HELD: 0,
    S.SUBMITTING: 1,
    S.CREATED: 2,
    S.PROCESSING: 3,
    **{final: 4 for final in FINAL_STATUSES},
}


@dataclass(frozen=True)
class Lifecycle:
    """One kind of row's moves: what may follow what, which moves are corrections, and how far
    along each state is. Payouts and refunds share the ledger-only states and the discipline."""

    name: str
    transitions: Mapping[RowState, frozenset[RowState]]
    corrections: frozenset[tuple[RowState, RowState]]
    rank: Mapping[RowState, int]
    api_statuses: frozenset[RowState]
    final: frozenset[RowState]


PAYOUTS = Lifecycle("payout", TRANSITIONS, CORRECTIONS, _RANK, API_STATUSES, FINAL_STATUSES)

REFUND_FINAL = frozenset({S.COMPLETED, S.FAILED, S.CANCELED})
REFUND_OPEN = frozenset({S.PENDING, S.MANUAL})
REFUND_CORRECTIONS = frozenset((a, b) for a in REFUND_FINAL for b in REFUND_FINAL if a != b)
REFUNDS = Lifecycle(
    "refund",
    {
        S.VALIDATED: frozenset({S.SUBMITTING}),
        S.SUBMITTING: REFUND_OPEN | REFUND_FINAL | {S.SUBMIT_REJECTED, S.CONFLICT, S.VALIDATED},
        S.PENDING: REFUND_FINAL,
        S.MANUAL: REFUND_FINAL,
        # The spec: a final refund changes only by the platform's manual correction (flagged).
        **{final: REFUND_FINAL - {final} for final in REFUND_FINAL},
    },
    REFUND_CORRECTIONS,
    {
        S.VALIDATED: 0,
        S.SUBMITTING: 1,
        **{open_: 2 for open_ in REFUND_OPEN},
        **{final: 3 for final in REFUND_FINAL},
    },
    REFUND_OPEN | REFUND_FINAL,
    REFUND_FINAL,
)
"""Refund statuses: (none) -> PENDING or MANUAL (or FAILED at once) -> COMPLETED/FAILED/CANCELED."""


def is_allowed(current: RowState, new: RowState, lifecycle: Lifecycle = PAYOUTS) -> bool:
    """True when the transitions table lets `current` move to `new`."""
    return new in lifecycle.transitions.get(current, frozenset())


def check_move(
    external_id: str, current: RowState, new: RowState, lifecycle: Lifecycle = PAYOUTS
) -> Move:
    """Classify a status report: APPLY it, ignore it as STALE, or raise `IllegalTransition`."""
    if new == current:
        return Move.STALE
    if is_allowed(current, new, lifecycle):
        return Move.APPLY
    rank = lifecycle.rank
    if current in rank and new in rank and rank[new] < rank[current]:
        return Move.STALE
    raise IllegalTransition(external_id, current, new)


def parse_api_status(value: str, lifecycle: Lifecycle = PAYOUTS) -> RowState | None:
    """The RowState for a status string from the service, or None when it is unknown."""
    try:
        state = RowState(value.strip().upper())
    except ValueError:
        return None
    return state if state in lifecycle.api_statuses else None
