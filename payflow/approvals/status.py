"""Where a batch's approval stands, and recording a decision (maker != checker, bound to content).

An approval counts only while the batch still has the content hash, totals and size the approver
saw, and only if it acknowledged every warning the batch has now: any change voids it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from payflow.approvals.identity import is_plain_name, person_key
from payflow.approvals.requirement import Requirement, approval_requirement
from payflow.ledger import PENDING_STATES, SENT_STATES, ApprovalRecord, Ledger
from payflow.ledger.db import reader
from payflow.ledger.outflow import outflow_started
from payflow.wording import counted

Decision = Literal["approve", "decline"]


class ApprovalRefused(Exception):
    """The decision cannot be recorded (own batch, unacknowledged warnings, already settled)."""


class WarningsUnacknowledged(ApprovalRefused):
    """An approval given without saying the warnings (and rows above the maximum) were read."""


@dataclass(frozen=True, slots=True)
class Approved:
    """The batch may be paid; `by` is empty when it was under every limit."""

    by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pending:
    """More approvals are needed."""

    steps_left: int
    by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Declined:
    """Someone declined the batch as it is now; nothing is paid."""

    by: str
    note: str | None


@dataclass(frozen=True, slots=True)
class Void:
    """Approvals were given to other content; the batch needs approving again."""

    steps_left: int
    voided: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Expired:
    """Nobody approved in time: counts as declined; nothing is paid."""

    expired_at: str


ApprovalStatus = Approved | Pending | Declined | Void | Expired


def _binds(record: ApprovalRecord, requirement: Requirement) -> bool:
    facts = requirement.facts
    return (
        record.content_hash == facts.content_hash
        and record.totals == facts.totals
        and record.rows == facts.rows
        and requirement.acknowledgements <= set(record.acknowledged)
    )


def status_for(requirement: Requirement, records: list[ApprovalRecord]) -> ApprovalStatus:
    """The status the records give under the requirement (pure: no clock, no database)."""
    bound = [r for r in records if _binds(r, requirement)]
    for record in bound:
        if record.decision == "decline":
            return Declined(record.approver, record.note)
    maker = person_key(requirement.facts.made_by or "")
    by_person: dict[str, str] = {}  # one approval per person, whatever the case of the name
    for record in bound:
        if record.decision == "approve" and person_key(record.approver) != maker:
            by_person.setdefault(person_key(record.approver), record.approver)
    approvers = tuple(by_person.values())
    if len(approvers) >= requirement.steps:
        return Approved(approvers)
    left = requirement.steps - len(approvers)
    voided = tuple(r.approver for r in records if r not in bound)
    if voided:
        return Void(left, voided)
    return Pending(left, approvers)


def approval_status(ledger: Ledger, batch_id: str) -> ApprovalStatus:
    """Approved, Pending(steps left), Declined, Void or Expired, from the ledger as it is now."""
    return status_under(ledger, approval_requirement(ledger, batch_id))


def status_under(ledger: Ledger, requirement: Requirement) -> ApprovalStatus:
    """`approval_status` for a requirement its caller has just read, with nothing written since
    (a requirement reads the whole batch: about a second at 100,000 rows)."""
    status = status_for(requirement, ledger.approvals_of(requirement.batch_id))
    if isinstance(status, Pending | Void) and ledger.now() >= requirement.expires_at:
        return Expired(requirement.expires_at.isoformat())
    return status


def record_decision(
    ledger: Ledger,
    batch_id: str,
    *,
    approver: str,
    decision: Decision,
    note: str | None = None,
    acknowledge_warnings: bool = False,
    via: str = "cli",
) -> ApprovalStatus:
    """Append the approver's decision bound to the batch as it is now; the status after it."""
    requirement = approval_requirement(ledger, batch_id)
    before = status_under(ledger, requirement)
    if isinstance(before, Declined | Expired):
        state = type(before).__name__.lower()
        raise ApprovalRefused(f"batch {batch_id} is {state}; nothing will be paid")
    if isinstance(before, Approved) and (decision == "approve" or before.by):
        raise ApprovalRefused(f"batch {batch_id} is already approved")
    if decision == "decline":
        # A batch under every limit is "approved" by the policy alone, yet a person's decline
        # must still stop it (the console asks a checker even then); only sent money is beyond
        # a decline.
        started = ledger.batch_counts(batch_id).count(SENT_STATES, PENDING_STATES)
        started += outflow_started(reader(ledger.engine), batch_id)  # refunds, link payouts
        if started:
            raise ApprovalRefused(
                f"batch {batch_id} is being paid ({counted(started, 'row')} sent); "
                "a decline cannot stop what was sent"
            )
    approver = approver.strip()
    if not approver:
        raise ApprovalRefused("an approval needs the approver's name")
    if not is_plain_name(approver):
        raise ApprovalRefused(
            f"the name {approver!r} has invisible or control characters: approve under your "
            "plain name"
        )
    made_by = requirement.facts.made_by
    if made_by is not None and person_key(approver) == person_key(made_by):
        raise ApprovalRefused(f"{made_by} made batch {batch_id} and cannot approve it")
    if (
        decision == "approve"
        and isinstance(before, Pending)
        and person_key(approver) in {person_key(name) for name in before.by}
    ):
        raise ApprovalRefused(
            f"{approver} already approved batch {batch_id}; the next step needs another person"
        )
    to_acknowledge = (*requirement.large_rows, *requirement.warnings)
    if decision == "approve" and to_acknowledge and not acknowledge_warnings:
        # The record keeps every key as acknowledged: given without the flag, a row above the
        # per-row maximum was "acknowledged" by an approver who never said so.
        listed = "; ".join(w.text for w in to_acknowledge)
        raise WarningsUnacknowledged(f"acknowledge these warnings to approve: {listed}")
    facts = requirement.facts
    ledger.append_approval(
        ApprovalRecord(
            batch_id=batch_id,
            approver=approver,
            decision=decision,
            at=ledger.now(),
            content_hash=facts.content_hash,
            totals=facts.totals,
            rows=facts.rows,
            acknowledged=tuple(sorted(requirement.acknowledgements)),
            note=note,
            via=via,
        )
    )
    return approval_status(ledger, batch_id)
