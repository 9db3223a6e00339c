"""Row states and the one table of allowed moves between them (invariant 5).

Every write to `payouts.state` goes through `check_move`, so this module is the only place that
decides what may follow what. A status that equals or lies behind the current one is *stale*
(duplicate or late webhook): the caller ignores it. A move nobody allowed is *illegal* and raises.
"""

from __future__ import annotations

from enum import Enum, StrEnum


class RowState(StrEnum):
    """Where one row of a batch stands; the last seven mirror the service's payout statuses."""

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
    # Same recipient, amount and currency paid or in flight under another externalId within
    # 30 days: never sent until an operator acknowledges it (`payflow run --allow-repeat`).
    HELD = "HELD"


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
API_STATUSES = frozenset({S.CREATED, S.PROCESSING}) | FINAL_STATUSES
"""The values `record_status` and `mark_created` accept from the service."""

TRANSITIONS: dict[RowState, frozenset[RowState]] = {
    S.VALIDATED: frozenset({S.SUBMITTING, S.HELD}),
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


def is_allowed(current: RowState, new: RowState) -> bool:
    """True when the transitions table lets `current` move to `new`."""
    return new in TRANSITIONS.get(current, frozenset())


def check_move(external_id: str, current: RowState, new: RowState) -> Move:
    """Classify a status report: APPLY it, ignore it as STALE, or raise `IllegalTransition`."""
    if new == current:
        return Move.STALE
    if is_allowed(current, new):
        return Move.APPLY
    if current in _RANK and new in _RANK and _RANK[new] < _RANK[current]:
        return Move.STALE
    raise IllegalTransition(external_id, current, new)


def parse_api_status(value: str) -> RowState | None:
    """The RowState for a payout status string from the service, or None when it is unknown."""
    try:
        state = RowState(value.strip().upper())
    except ValueError:
        return None
    return state if state in API_STATUSES else None
