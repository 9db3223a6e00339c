"""Which rows of a batch may be rerun: each row by the latest attempt of its root."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from payflow.expected import ExpectedFailure
from payflow.ledger import (
    RERUNNABLE_STATES,
    AttemptView,
    FindingKind,
    FindingState,
    Ledger,
    RowOutcome,
    RowState,
)
from payflow.rerun.classify import Classifier, FailureClass


class RerunRefused(ExpectedFailure):
    """The rerun cannot go ahead as asked; the message says why in one line. Nothing was sent."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A row whose latest attempt failed for good: the parent of the next attempt."""

    row_number: int
    root_external_id: str
    external_id: str  # the parent: the latest attempt
    attempt: int
    state: RowState
    status_message: str | None
    payout_id: str | None
    amount: Decimal
    currency: str
    corrected: bool
    failure_class: FailureClass
    next_step: str
    earlier: tuple[str, ...] = ()  # the root's attempts before the parent, asked about too


@dataclass(frozen=True, slots=True)
class Ineligible:
    """A row that may not be rerun, and why."""

    row_number: int
    external_id: str | None
    state: RowState
    reason: str
    awaiting_payment: bool = False  # an attempt registered by a rerun and not sent yet


@dataclass(frozen=True, slots=True)
class Candidates:
    """The batch's rows split into those a rerun may choose and those it must refuse."""

    batch_id: str
    eligible: list[Candidate]
    ineligible: list[Ineligible]


def _reason(view: AttemptView) -> str:
    if view.paid_by_service:
        # The service's word, not the ledger's state: a FAILED row the platform paid after all
        # (or whose earlier attempt it paid) was offered for a rerun, which pays twice.
        if view.state is RowState.COMPLETED:
            return "COMPLETED: it was paid"
        return f"{view.outcome}: the service paid it (the ledger says {view.state}); never rerun"
    if view.outcome == RowOutcome.PENDING_AT_SERVICE:
        return (
            f"pending at the service (it says {view.service_status}, the ledger {view.state}): "
            "wait for its final status"
        )
    if view.outcome == RowOutcome.CORRECTED and view.state is RowState.COMPLETED:
        return (
            f"not paid: the service says {view.service_status} after completion; the ledger "
            "holds it COMPLETED, so a rerun cannot link to it: take it up with the platform"
        )
    if view.state is RowState.COMPLETED:
        return "COMPLETED: it was paid"
    if view.state is RowState.CONFLICT:
        return "CONFLICT: its externalId belongs to another payout; upload a corrected row"
    if view.state is RowState.REJECTED:
        return "REJECTED by validation: fix the file and upload it"
    if view.state is RowState.VALIDATED and view.attempt > 0:
        return f"rerun as {view.external_id} (batch {view.batch_id}), not sent yet"
    if view.state is RowState.HELD:
        return (
            f"HELD: {view.external_id} repeats a recent payout to the same recipient; "
            f"`payflow pay {view.batch_id} --allow-repeat` pays it (another person approves)"
        )
    return f"{view.state}: not final yet; wait for its final status"


def find_candidates(ledger: Ledger, batch_id: str, classify: Classifier) -> Candidates:
    """Split every source row of `batch_id` by whether its latest attempt may be rerun."""
    if not ledger.batch_exists(batch_id):
        raise RerunRefused(f"no batch {batch_id!r} in the ledger")
    eligible: list[Candidate] = []
    ineligible: list[Ineligible] = []
    # Reconcile found the service saying otherwise (paid after all, say): such a row was still
    # listed "not paid ... rerun the row" beside the finding.
    differs = {
        f.row_number: f.detail
        for f in ledger.findings(batch_id)
        if f.kind == FindingKind.STATUS_DIFFERS and f.state == FindingState.OPEN
    }
    for view in ledger.latest_attempts(batch_id):
        if view.row_number in differs and view.external_id is not None:
            reason = (
                f"the service says otherwise ({differs[view.row_number]}): not rerun while that "
                f"finding is open (`payflow findings {batch_id}`)"
            )
            ineligible.append(Ineligible(view.row_number, view.external_id, view.state, reason))
            continue
        if (
            view.state not in RERUNNABLE_STATES
            or view.external_id is None
            or view.paid_by_service
            or view.outcome == RowOutcome.PENDING_AT_SERVICE
        ):
            waiting = view.state is RowState.VALIDATED and view.attempt > 0
            ineligible.append(
                Ineligible(view.row_number, view.external_id, view.state, _reason(view), waiting)
            )
            continue
        assert view.amount is not None and view.currency is not None
        # The service's word when it has one (FAILED in the ledger, CANCELED at the service).
        failure_class, next_step = classify(
            view.service_status or view.state.value, view.status_message
        )
        root = view.root_external_id or view.external_id
        earlier = ledger.earlier_attempts(root, view.attempt) if view.attempt else []
        eligible.append(
            Candidate(
                row_number=view.row_number,
                root_external_id=root,
                external_id=view.external_id,
                attempt=view.attempt,
                state=view.state,
                status_message=view.status_message,
                payout_id=view.payout_id,
                amount=view.amount,
                currency=view.currency,
                corrected=view.corrected,
                failure_class=failure_class,
                next_step=next_step,
                earlier=tuple(earlier),
            )
        )
    return Candidates(batch_id, eligible, ineligible)
