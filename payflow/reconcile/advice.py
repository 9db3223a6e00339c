"""A report row's next step, checked against the service's word and the row's history first,
so that no advice pays a person twice (design invariant 9).

The failure classes table (`classes.py`) answers for a row that truly failed; before it is
asked, a row the service paid, a payout the platform reversed after completion, and a CONFLICT
row whose externalId is an earlier payout each get the step their history allows.
"""

from __future__ import annotations

from payflow.ledger import Disposition, ReportLine, RowOutcome, RowState
from payflow.model import DERIVED_PREFIX
from payflow.reconcile.classes import Classification, FailureClass, FailureClasses

UNPAID_OUTCOMES = frozenset(
    {
        RowOutcome.FAILED,
        RowOutcome.CORRECTED,
        RowOutcome.CANCELED,
        RowOutcome.EXPIRED,
        RowOutcome.REFUSED,
        RowOutcome.REJECTED,
    }
)

PAID_AFTER_FAILURE = (
    "The service paid it after the ledger recorded a failure: it is paid. Never rerun it or "
    "pay this person another way."
)
REVERSED_AFTER_COMPLETION = (
    "The service says {status} after it completed: not paid. `payflow rerun` cannot send it "
    "again while the ledger holds it COMPLETED: confirm with the platform, then reconcile, "
    "before paying this person any other way."
)
DERIVED_CONFLICT_PAID = (
    "Already paid: this file has no externalIds, and the row's id, derived from its requisites, "
    "amount and currency, is payout {ext} of batch {batch}, which the service paid; only other "
    "columns (such as the name) differ. Do not give it a new externalId or pay it another way: "
    "that pays the person twice."
)
DERIVED_CONFLICT_PENDING = (
    "This file has no externalIds, and the row's id, derived from its requisites, amount and "
    "currency, is payout {ext} of batch {batch}, still in flight: wait for it; do not give the "
    "row a new externalId."
)
DERIVED_CONFLICT_UNPAID = (
    "This file has no externalIds, and the row's id, derived from its requisites, amount and "
    "currency, is payout {ext} of batch {batch}, which was not paid ({state}): review and rerun "
    "that row with `payflow rerun {batch}`; do not give this row a new externalId."
)
PENDING_AT_SERVICE = (
    "The service says {status} after the ledger recorded it final: not paid yet, not failed "
    "either. Wait: the scheduled reconciliation looks again (or `payflow reconcile` of this "
    "batch); do not rerun it or pay this person another way meanwhile."
)
PAID_ANOTHER_AMOUNT = (
    "The service paid {paid} where the row asked {asked} (see the findings): ask the platform "
    "why before paying any difference; never rerun the row for it."
)
GIVEN_CONFLICT_PAID = (
    "The externalId is payout {ext} of batch {batch}, which the service paid, with other "
    "content: if this row is that payment corrected, it is paid already, do not send it again; "
    "only a different payment gets its own externalId."
)


def advise(line: ReportLine, classes: FailureClasses) -> Classification | None:
    """The failure class and next step of a row that did not pay (a paid-after-failure row's
    warning too); None for a row that needs nothing."""
    if line.outcome is RowOutcome.PAID_CORRECTED:
        return Classification(FailureClass.DO_NOT_RETRY, PAID_AFTER_FAILURE)
    if line.outcome is RowOutcome.PENDING_AT_SERVICE:
        said = line.service_status or "not final"
        text = PENDING_AT_SERVICE.format(status=said)
        return Classification(FailureClass.DO_NOT_RETRY, text)
    if line.outcome is RowOutcome.PAID and _paid_another_amount(line):
        text = PAID_ANOTHER_AMOUNT.format(paid=line.service_amount, asked=line.amount)
        return Classification(FailureClass.DO_NOT_RETRY, text)
    if line.outcome not in UNPAID_OUTCOMES:
        return None
    if line.disposition == Disposition.CONFLICT.value:
        return _conflict(line, classes)
    if line.outcome is RowOutcome.REJECTED and line.first_batch_id is not None:
        # "Fix the row and upload it again" would only meet that payout as a repeat or a conflict.
        return Classification(
            FailureClass.FIX_DETAILS,
            f"Its externalId is already a payout of batch {line.first_batch_id}: look that "
            "payout up before uploading the row again.",
        )
    if line.outcome is RowOutcome.CORRECTED and line.state == RowState.COMPLETED.value:
        said = line.service_status or "not paid"
        return Classification(FailureClass.UNKNOWN, REVERSED_AFTER_COMPLETION.format(status=said))
    # The service's word when it has one: its status and message, not the ledger's older ones.
    status = line.service_status if _heard(line) else line.state
    message = line.service_message if _heard(line) else line.status_message
    return classes.classify(status or line.state, message)


def _paid_another_amount(line: ReportLine) -> bool:
    return (
        line.service_amount is not None
        and line.amount is not None
        and line.service_amount != line.amount
    )


def _heard(line: ReportLine) -> bool:
    return line.service_status not in (None, "NOT_FOUND") and line.disposition in (
        Disposition.NEW.value,
        Disposition.ALREADY_KNOWN.value,
    )


def _conflict(line: ReportLine, classes: FailureClasses) -> Classification:
    """A CONFLICT row: its externalId is another row's payout, checked before any advice."""
    ext, batch = line.external_id or "", line.first_batch_id or "?"
    earlier = line.service_status or line.known_state
    paid = earlier == RowState.COMPLETED.value
    if ext.startswith(DERIVED_PREFIX):
        if paid:
            text = DERIVED_CONFLICT_PAID
        elif earlier in (None, *(s.value for s in _IN_FLIGHT)):
            text = DERIVED_CONFLICT_PENDING
        else:
            text = DERIVED_CONFLICT_UNPAID
        return Classification(
            FailureClass.DO_NOT_RETRY, text.format(ext=ext, batch=batch, state=earlier)
        )
    if paid:
        return Classification(
            FailureClass.FIX_DETAILS, GIVEN_CONFLICT_PAID.format(ext=ext, batch=batch)
        )
    return classes.classify(RowState.CONFLICT.value, None)


_IN_FLIGHT = frozenset(
    {RowState.VALIDATED, RowState.SUBMITTING, RowState.CREATED, RowState.PROCESSING, RowState.HELD}
)
