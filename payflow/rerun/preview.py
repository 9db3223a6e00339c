"""The preview of a rerun: eligible rows grouped by statusMessage and class, nothing sent."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from payflow.approvals.policy import ApprovalPolicy
from payflow.ledger import NewAttempt
from payflow.model import PayoutInstruction
from payflow.redact import mask_requisites
from payflow.rerun.candidates import Candidate, Candidates
from payflow.rerun.classify import FailureClass
from payflow.rerun.selection import CLI_WORDS, ChoiceWords, Selection
from payflow.schemas.iso4217 import money_words
from payflow.wording import counted, plural

SHOWN_ROWS = 20


class Failure(Protocol):
    """A failed row as grouping reads it: a rerun candidate, or a rerun's earlier attempt."""

    @property
    def row_number(self) -> int: ...
    @property
    def external_id(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def status_message(self) -> str | None: ...
    @property
    def failure_class(self) -> str: ...
    @property
    def next_step(self) -> str: ...
    @property
    def amount(self) -> Decimal: ...
    @property
    def currency(self) -> str: ...


@dataclass
class PreviewGroup:
    """Rows that failed the same way: same statusMessage (or status) and failure class."""

    message: str
    failure_class: str
    next_step: str
    rows: list[int] = field(default_factory=list)
    totals: dict[str, Decimal] = field(default_factory=dict)
    # The rows themselves, in `rows` order: a page names each by externalId and amount too.
    members: list[Failure] = field(default_factory=list)

    def add(self, candidate: Failure) -> None:
        """Count one more row of this group."""
        self.rows.append(candidate.row_number)
        self.members.append(candidate)
        current = self.totals.get(candidate.currency, Decimal(0))
        self.totals[candidate.currency] = current + candidate.amount


def group_key(failure: Failure) -> tuple[str, str]:
    """(statusMessage, or the status when there is none; failure class): what rows share to
    fail the same way."""
    message = failure.status_message or f"({failure.state}, no statusMessage)"
    return message, failure.failure_class


def group_candidates(chosen: Sequence[Failure]) -> list[PreviewGroup]:
    """Groups by (statusMessage or status, class), largest first."""
    groups: dict[tuple[str, str], PreviewGroup] = {}
    for candidate in chosen:
        key = group_key(candidate)
        message = key[0]
        group = groups.get(key)
        if group is None:
            group = groups[key] = PreviewGroup(message, *key[1:], candidate.next_step)
        group.add(candidate)
    return sorted(groups.values(), key=lambda g: (-len(g.rows), g.message))


def group_lines(group: PreviewGroup) -> list[str]:
    """A group as the operator reads it: count, statusMessage, class, totals, rows, next step."""
    return [
        f"  {len(group.rows)} x {group.message!r} [{group.failure_class}]: "
        f"{_totals_text(group.totals)}",
        f"      {plural(len(group.rows), 'row')} {_rows_text(group.rows)}",
        f"      next step: {group.next_step}",
    ]


def _rows_text(rows: Sequence[int]) -> str:
    shown = ", ".join(str(r) for r in rows[:SHOWN_ROWS])
    return shown + (f" and {len(rows) - SHOWN_ROWS} more" if len(rows) > SHOWN_ROWS else "")


def _totals_text(totals: dict[str, Decimal]) -> str:
    return ", ".join(money_words(a, c) for c, a in sorted(totals.items()))


def preview_lines(
    candidates: Candidates,
    chosen: Sequence[Candidate],
    selection: Selection,
    words: ChoiceWords = CLI_WORDS,
    *,
    sending: bool = False,
) -> list[str]:
    """What a rerun of `chosen` would send, for the operator to review; sends nothing. With
    nothing chosen yet, `chosen` is every eligible row and the lines say how to choose, in the
    reader's `words` (flags, or a deployment's parameters). `sending`: the reviewed rerun's own
    record of its choice, without the last line (that nothing was sent, and what to do next)."""
    rows = counted(len(chosen), "row")
    if selection.empty:
        heading = f"{rows} can be sent again; none is chosen yet"
    else:
        heading = f"{rows} would be sent again"
    lines = [f"batch {candidates.batch_id}: {heading}"]
    for group in group_candidates(chosen):
        lines += group_lines(group)
    waiting = [i for i in candidates.ineligible if i.awaiting_payment]
    if waiting:
        already = counted(len(waiting), "row")
        lines.append(f"  {already} already rerun and waiting to be paid (approval?)")
    states = Counter(str(i.state) for i in candidates.ineligible if not i.awaiting_payment)
    if states:
        by_state = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
        lines.append(f"  not eligible: {by_state}")
    if sending:
        return lines
    if selection.empty:
        next_step = f"{words.choose} {words.confirm}"
    elif chosen:
        next_step = words.send
    else:
        next_step = "no row that can be sent again matches the choice"
    lines.append(f"nothing was sent; {next_step}")
    return lines


def correction_lines(
    parents: Mapping[str, PayoutInstruction], attempts: Sequence[NewAttempt]
) -> list[str]:
    """What a corrections file changes in each attempt, against its parent (by externalId):
    requisites masked, a name only named (personal data), the bank as written."""
    lines: list[str] = []
    for attempt in attempts:
        before, after = parents[attempt.parent_external_id], attempt.instruction
        changes = []
        if after.requisites != before.requisites:
            changes.append(
                f"requisites {mask_requisites(after.requisites)}"
                f" (was {mask_requisites(before.requisites)})"
            )
        if after.bank_name != before.bank_name:
            changes.append(f"bankName {after.bank_name!r} (was {before.bank_name!r})")
        if after.name != before.name:
            changes.append("name")
        if changes:
            lines.append(
                f"  corrected: row {after.row_number} ({attempt.parent_external_id}): "
                + ", ".join(changes)
            )
    return lines


def approval_line(
    chosen: Sequence[Candidate], policy: ApprovalPolicy, *, console: bool = False
) -> str:
    """Whether a rerun of the `chosen` rows waits for a second person, and why: the approvals
    policy's band per currency, a do_not_retry row (a warning a person must acknowledge), and,
    `console`, that a checker there approves every batch a maker submits."""
    totals: dict[str, Decimal] = {}
    for candidate in chosen:
        totals[candidate.currency] = totals.get(candidate.currency, Decimal(0)) + candidate.amount
    steps, bands = 0, []
    for currency, total in sorted(totals.items()):
        needed, words = policy.rule_for(currency).steps_for(total)
        steps = max(steps, needed)
        bands.append(f"{money_words(total, currency)}: {words}")
    policy_words = "; ".join(bands)
    reasons = [f"the approvals policy asks for it ({policy_words})"] if steps else []
    blocked = sum(1 for c in chosen if c.failure_class == FailureClass.DO_NOT_RETRY)
    if blocked:
        reasons.append(f"{counted(blocked, 'row')} of class do_not_retry, a warning a person reads")
    if console:
        reasons.append("in the console a checker approves every batch a maker submits")
    if not reasons:
        return (
            "is sent without waiting for anyone: the approvals policy asks for no approval "
            f"({policy_words})"
        )
    people = f"{steps} other people" if steps > 1 else "a second person"
    alone = "" if steps else f" (the approvals policy alone asks for none: {policy_words})"
    return (
        f"waits for {people} (a checker, never you, the maker) before anything is sent: "
        + "; ".join(reasons)
        + alone
    )
