"""What a batch needs before it may be paid: approval steps, the rules behind them, warnings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from payflow.approvals.policy import CurrencyRule
from payflow.approvals.store import Terms, active_policy, policy_version, terms_of
from payflow.ledger import BatchFacts, CurrencyTotal, HeldRow, IntakeWarning, Ledger
from payflow.ledger.actions import last_action
from payflow.ledger.counts import sums_by_currency
from payflow.ledger.db import reader
from payflow.ledger.outflow import outflow_above, unsent_outflow
from payflow.model import AMOUNT_OUTLIER, DERIVED_PREFIX, DOUBLE_PAYMENT
from payflow.reconcile.classes import FailureClass
from payflow.schemas.iso4217 import amount_text, money_words
from payflow.settings import Settings
from payflow.wording import counted

RECENT_DAYS = 30
DEFAULT_EXPIRY = timedelta(hours=24)  # a batch with nothing to pay has no currency rule
SIMILAR_SHARE = Decimal("0.8")  # a batch sharing this much of its contents is "mostly identical"


class UnknownBatch(LookupError):
    """No such batch in the ledger."""

    @classmethod
    def named(cls, batch_id: str) -> UnknownBatch:
        """The error for `batch_id`, in the words every command says it with."""
        return cls(f"no batch {batch_id!r} in the ledger")


@dataclass(frozen=True, slots=True)
class ApprovalWarning:
    """Something the approver must acknowledge explicitly; `key` is what the record keeps."""

    key: str
    text: str


@dataclass(frozen=True, slots=True)
class EarlierFailure:
    """A rerun row's earlier attempt: how it ended, its statusMessage, the failure class and
    next step (`failure_classes.csv`, as the rerun preview showed the maker)."""

    row_number: int
    external_id: str
    earlier_external_id: str
    state: str
    status_message: str | None
    failure_class: str
    next_step: str
    same_requisites: bool
    amount: Decimal  # what this attempt sends
    currency: str

    @property
    def message(self) -> str:
        """The statusMessage as quoted to an approver."""
        return repr(self.status_message) if self.status_message else "(no statusMessage)"

    @property
    def text(self) -> str:
        """One line: the row, its earlier attempt, why that failed and its class."""
        return (
            f"{self.external_id} (row {self.row_number}) sends {self.earlier_external_id} again: "
            f"it ended {self.state}, {self.message} [{self.failure_class}]"
        )


@dataclass(frozen=True, slots=True)
class Requirement:
    """Steps needed, the rule of each currency, rows needing their own approval, warnings."""

    batch_id: str
    facts: BatchFacts
    steps: int
    rules: tuple[str, ...]
    large_rows: tuple[ApprovalWarning, ...]
    warnings: tuple[ApprovalWarning, ...]
    expires_at: datetime
    held: tuple[ApprovalWarning, ...] = ()  # repeats still HELD: shown, not paid, not approved
    earlier: tuple[EarlierFailure, ...] = ()  # a rerun's rows: why each earlier attempt failed
    # What an approval now sends: the totals above also count rows held, or with a payout
    # already (through this batch, or another batch that paid the same externalId).
    to_send: tuple[CurrencyTotal, ...] = ()
    # Validation's other warnings the maker saw at upload (how the file was read): shown to
    # the checker, not acknowledged, since they are about the file rather than a payout.
    notes: tuple[str, ...] = ()
    policy_version: int = 1  # the ledger's policy version the batch is held to
    terms: Terms | None = None  # recorded when its maker submitted it (None: not yet)

    @property
    def acknowledgements(self) -> frozenset[str]:
        """Keys an approval must have seen: every warning and every large row."""
        return frozenset(w.key for w in (*self.warnings, *self.large_rows))

    def to_send_line(self) -> str | None:
        """`To send when approved: 1 payout (100.00 RUB) ...` when that is fewer than the
        batch's payouts (an approver read "3 payouts, RUB 400" and 100 went); else None."""
        rows = sum(total.rows for total in self.to_send)
        if rows >= self.facts.rows:
            return None
        if rows == 0:
            return "Nothing to send when approved: every row is held or already has a payout"
        sums = sums_by_currency(self.to_send)
        amounts = ", ".join(money_words(a, c) for c, a in sorted(sums.items()))
        return (
            f"To send when approved: {counted(rows, 'payout')}"
            + (f" ({amounts})" if amounts else "")
            + "; the batch's other rows are held, or already have a payout (through this batch "
            "or another with the same externalId), and are not sent again"
        )


def _repeat_text(row: HeldRow) -> str:
    earlier = (
        f"{row.earlier_external_id} ({row.earlier_state}, batch {row.earlier_batch_id})"
        if row.earlier_external_id
        else "an earlier payout"
    )
    differs = f" ({row.differs})" if row.differs else ""
    return (
        f"{row.external_id} (row {row.row_number}): the same person, amount and currency "
        f"as {earlier}, paid or in flight within {RECENT_DAYS} days{differs}"
    )


def _repeats(ledger: Ledger, batch_id: str) -> tuple[list[ApprovalWarning], list[ApprovalWarning]]:
    """(released repeats: warnings to acknowledge, still HELD repeats: shown only).

    Both come from the ledger's repeat holds (`payflow.ledger.repeats`), the one place that
    decides what a repeat is; a HELD row is never sent, so approving does not cover it."""
    released: list[ApprovalWarning] = []
    held: list[ApprovalWarning] = []
    for row in ledger.repeat_rows(batch_id):
        item = ApprovalWarning(f"repeat:{row.external_id}", _repeat_text(row))
        (held if row.still_held else released).append(item)
    return released, held


def _amended(ledger: Ledger, batch_id: str) -> list[ApprovalWarning]:
    """A row without an externalId whose amount differs from the same recipient's recent
    payout: an edited amount is a new payout by the row's content, so a second person sees it."""
    warnings: list[ApprovalWarning] = []
    for row in ledger.amended_rows(batch_id, DERIVED_PREFIX):
        now, before = (
            money_words(row.amount, row.currency),
            money_words(row.earlier_amount, row.currency),
        )
        warnings.append(
            ApprovalWarning(
                f"amended:{row.external_id}",
                f"row {row.row_number} ({row.external_id}) pays {now} to a recipient paid "
                f"{before} by {row.earlier_external_id} ({row.earlier_state}, batch "
                f"{row.earlier_batch_id}): if the amount was corrected, that payout already "
                "went; give rows an externalId to pay one recipient twice on purpose",
            )
        )
    return warnings


def _twins(ledger: Ledger, batch_id: str) -> list[ApprovalWarning]:
    """Rows of one file paying the same recipient, amount and currency under two externalIds:
    validation calls it a likely double payment, so a second person sees it before both pay."""
    return [
        ApprovalWarning(
            f"twin:{row.external_id}",
            f"{row.external_id} (row {row.row_number}) pays the same recipient, amount and "
            f"currency as {row.first_external_id} (row {row.first_row_number}) of this file: "
            "a likely double payment",
        )
        for row in ledger.twin_rows(batch_id)
    ]


def _from_intake(ledger: Ledger, batch_id: str) -> tuple[list[ApprovalWarning], list[str]]:
    """(amounts far above the batch's median: warnings to acknowledge, like a double payment,
    since an extra zero pays ten times over; every other intake warning: notes to read).

    Validation's likely double payments are left out: `_twins` says them from the ledger."""
    outliers: list[ApprovalWarning] = []
    notes: list[str] = []
    for warning in ledger.intake_warnings(batch_id):
        if warning.rule == AMOUNT_OUTLIER:
            outliers.append(
                ApprovalWarning(f"outlier:{warning.external_id}", _intake_text(warning))
            )
        elif warning.rule != DOUBLE_PAYMENT:
            notes.append(_intake_text(warning))
    return outliers, notes


def _intake_text(warning: IntakeWarning) -> str:
    if warning.external_id:
        where = f"{warning.external_id} (row {warning.row_number}): "
    else:  # about the file as a whole (its header)
        where = f"{warning.column}: " if warning.column else ""
    return f"{where}{warning.message}"


def _earlier_failures(ledger: Ledger, batch_id: str) -> list[EarlierFailure]:
    """Each attempt of a rerun batch with the earlier attempt it sends again, classified by the
    failure classes table the rerun preview and the report read."""
    parents = ledger.rerun_parents(batch_id)
    if not parents:
        return []
    # Imported here: the rerun package reads corrections files (pandas), and every approval
    # check of an ordinary batch (approve, pay, each pay run) would load it for nothing.
    from payflow.rerun.classify import classifier

    classify = classifier(Settings().failure_classes_path)
    out = []
    for parent in parents:
        failure_class, next_step = classify(parent.parent_state.value, parent.parent_status_message)
        out.append(
            EarlierFailure(
                parent.row_number,
                parent.external_id,
                parent.parent_external_id,
                parent.parent_state.value,
                parent.parent_status_message,
                failure_class.value,
                next_step,
                parent.same_requisites,
                parent.amount,
                parent.currency,
            )
        )
    return out


def _do_not_retry(earlier: list[EarlierFailure]) -> list[ApprovalWarning]:
    """Rerun rows whose earlier attempt failed in a way not to send again (a blocked account):
    the maker may have read past it, so a second person acknowledges it before it is sent."""
    return [
        ApprovalWarning(
            f"do_not_retry:{row.external_id}",
            f"{row.text}: {row.next_step} "
            + (
                "This attempt goes to the same requisites."
                if row.same_requisites
                else "This attempt goes to corrected requisites."
            ),
        )
        for row in earlier
        if row.failure_class == FailureClass.DO_NOT_RETRY
    ]


def _similar(ledger: Ledger, facts: BatchFacts) -> list[ApprovalWarning]:
    out = []
    for other, shared in ledger.similar_batches(facts.batch_id, facts.created_at, RECENT_DAYS):
        if facts.rows and Decimal(shared) / facts.rows >= SIMILAR_SHARE:
            out.append(
                ApprovalWarning(
                    f"similar:{other}",
                    f"{shared} of {counted(facts.rows, 'row')} {'pays' if shared == 1 else 'pay'} "
                    f"the same as batch {other} "
                    f"(last {RECENT_DAYS} days): is this file a copy?",
                )
            )
    return out


def approval_requirement(ledger: Ledger, batch_id: str) -> Requirement:
    """The approval a batch needs under the policy version recorded when it was submitted (the
    ledger's active policy before then), never fewer steps than that record says."""
    facts = ledger.batch_facts(batch_id)
    if facts is None:
        raise UnknownBatch.named(batch_id)
    terms = terms_of(ledger, batch_id)
    held_to = policy_version(ledger, terms.policy_version) if terms else active_policy(ledger)
    policy = held_to.policy
    steps = 0
    rules: list[str] = []
    expiry = None
    row_limits: dict[str, Decimal] = {}
    # Bands count what this batch may still send: a row another batch (or this one) already
    # paid under the same externalId is not paid again, and asked 629,930 of 7,350 to send.
    outflow = unsent_outflow(reader(ledger.engine), batch_id)  # a refund or links batch's
    may_send = sums_by_currency((*ledger.may_send(batch_id), *outflow))
    for currency, total in sorted(facts.totals.items()):
        rule = policy.rule_for(currency)
        rules.append(_band(rule, currency, total, may_send.get(currency, Decimal(0))))
        if currency in may_send:
            steps = max(steps, rule.steps_for(may_send[currency])[0])
        expiry = rule.expiry if expiry is None else min(expiry, rule.expiry)
        if rule.row_max is not None:
            row_limits[currency] = rule.row_max
    large = tuple(
        ApprovalWarning(
            f"row:{ext}",
            f"{ext}: {money_words(amount, currency)} is above the per-row maximum "
            f"{amount_text(row_limits[currency], currency)}: it needs its own approval",
        )
        for ext, currency, amount in (
            *ledger.rows_above(batch_id, row_limits),
            *outflow_above(reader(ledger.engine), batch_id, row_limits),
        )
    )
    released, held = _repeats(ledger, batch_id)
    earlier = _earlier_failures(ledger, batch_id)
    outliers, notes = _from_intake(ledger, batch_id)
    warnings = tuple(
        _do_not_retry(earlier)
        + released
        + _twins(ledger, batch_id)
        + outliers
        + _amended(ledger, batch_id)
        + _similar(ledger, facts)
    )
    if (large or warnings) and steps == 0:
        # Nothing that needs an acknowledgement can go on by itself: the maker's own
        # `--allow-repeat` is a submission, and a second person acknowledges it.
        steps = 1
        why = "a row above the per-row maximum" if large else "a warning below"
        rules.append(f"{why} needs a person's approval: 1 approval step")
    if steps == 0 and last_action(ledger, batch_id, "submitted") is not None:
        # The console asks a checker of every batch a maker submits there; kept only in the
        # console, `payflow pay` paid such a batch before any checker saw it.
        steps = 1
        rules.append(
            "submitted in the console, where a checker approves every batch: 1 approval step"
        )
    if terms is not None and terms.steps > steps:
        # The record never loosens: what the batch needed when submitted, it needs still.
        rules.append(
            f"recorded when the batch was submitted (policy version {terms.policy_version}): "
            f"{counted(terms.steps, 'approval step')}"
        )
        steps = terms.steps
    expires_at = facts.created_at + (expiry if expiry is not None else DEFAULT_EXPIRY)
    return Requirement(
        batch_id,
        facts,
        steps,
        tuple(rules),
        large,
        warnings,
        expires_at,
        tuple(held),
        tuple(earlier),
        (*ledger.to_pay(batch_id), *outflow),
        tuple(notes),
        held_to.version,
        terms,
    )


def _band(rule: CurrencyRule, currency: str, total: Decimal, sending: Decimal) -> str:
    """The rule line of one currency: its band by what the batch may still send."""
    text = amount_text(total, currency)
    if sending == total:
        return f"{currency} total {text}: {rule.steps_for(total)[1]}"
    if sending == 0:
        return f"{currency} total {text}: every row has a payout already, none is sent again"
    return (
        f"{currency} {amount_text(sending, currency)} still to send of {text} in the batch "
        f"(rows with a payout already are not sent again): {rule.steps_for(sending)[1]}"
    )
