"""What the batch pages show, read from the ledger: list rows, state, progress, summary."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from markupsafe import Markup, escape

from payflow.acts.history import PAY_WAITS
from payflow.approvals import Approved, Expired, PolicyError, approval_status
from payflow.approvals.requirement import EarlierFailure
from payflow.approvals.standing import standing
from payflow.console.amounts import AmountLine, amount_lines
from payflow.console.context import ConsoleContext
from payflow.console.paying import (
    STARTED,
    awaits_approval,
    can_go_on,
    is_interrupted,
    is_paying,
    run_alive,
)
from payflow.ending import batch_end
from payflow.ledger import BatchCounts, CurrencyTotal, Disposition, RefundRowView, RowState
from payflow.ledger.actions import last_action
from payflow.ledger.refund_book import OPEN_STATES as REFUND_OPEN_STATES
from payflow.ledger.rejected import RejectedLine
from payflow.paying.run_end import FAILED, FINISHED
from payflow.reconcile.advice import UNPAID_OUTCOMES
from payflow.redact import mask_requisites
from payflow.refunds.report import not_refunded, why_not_refunded
from payflow.rerun import FailureClass, classifier, find_candidates, group_candidates
from payflow.rerun.preview import PreviewGroup, group_key
from payflow.schemas.iso4217 import money_words
from payflow.wording import not_rechecked_line, state_words, unsent_words


@dataclass(frozen=True)
class BatchLine:
    """One line of the batches list."""

    batch_id: str
    source: str  # the file, and its sheet when it is a workbook's
    created_at: datetime
    state: str
    rows: int
    totals: str
    made_by: str
    approved_by: str


# Approved in the console, but its run was neither started nor resumed there (`PAY_WAITS`).
APPROVED_WAITING = "approved, waiting for its payout run"


def batch_state(ctx: ConsoleContext, batch_id: str, counts: BatchCounts) -> str:
    """uploaded, awaiting approval, approved (waiting for its payout run), declined, paying,
    interrupted, paid, finished with failures, pay run stopped."""
    last = last_action(
        ctx.ledger, batch_id, "submitted", "declined", PAY_WAITS, *STARTED, FINISHED, FAILED
    )
    if last is None:
        return _state_from_ledger(ctx, batch_id, counts)
    if last.action != "declined" and (ended := _ended(ctx, batch_id, counts)) is not None:
        return ended
    if last.action == "submitted":
        if counts.own_sent or not counts.to_send or run_alive(ctx, batch_id):
            # Approved and paid (or being paid) elsewhere after its submission here: `payflow
            # pay`, a worker. It read "awaiting approval" beside "COMPLETED 3".
            return _state_from_ledger(ctx, batch_id, counts)
        return "awaiting approval"
    if last.action == PAY_WAITS:
        if counts.to_send and not counts.own_sent:
            # "Approve and pay" again was offered here and refused as already decided: the
            # approval stands, and the run waiting for it pays once its own form is answered.
            return "interrupted" if can_go_on(ctx, batch_id, counts) else APPROVED_WAITING
        return _state_from_ledger(ctx, batch_id, counts)
    if last.action == "declined":
        return "declined"
    if last.action == FAILED:
        return "pay run stopped"
    if is_interrupted(ctx, batch_id, counts):
        return "interrupted"
    if is_paying(batch_id) or (last.action in STARTED and (counts.to_send or counts.pending)):
        # Until its end is recorded a run is over when every row is final (a worker that was
        # killed records no end).
        return "paying"
    if counts.pending:
        return "finished with rows pending"
    return _finished(counts)


# States in which "Reconcile now" is not offered: nothing of the batch was sent yet, or its run
# is still sending and following it.
NOT_RECONCILED_YET = frozenset(
    {"uploaded", "awaiting approval", APPROVED_WAITING, "declined", "nothing to pay", "paying"}
)


def why_not_reconcile(state: str, counts: BatchCounts) -> str | None:
    """Why "Reconcile now" would do nothing for the batch now; None when it is offered. An
    interrupted or stopped run that sent no row left nothing at the service to compare: the
    button was shown, and pressing it said "5 payouts fetched again" of rows never sent."""
    if state in NOT_RECONCILED_YET:
        return f"the batch is {state}"
    if not counts.at_service:
        return "no row of this batch was sent, so the service holds nothing of it to compare"
    return None


def conflicts(ctx: ConsoleContext, batch_id: str) -> tuple[int, list[RejectedLine]]:
    """How many rows of the batch were refused as a known externalId with other content, and the
    first ones, each naming the earlier payout's batch and the columns that differ."""
    return ctx.ledger.conflict_rows(batch_id, SHOWN_CONFLICTS)


# "registered by batch <id> (row N)": how a conflict's reason names the earlier payout's batch
# (payflow.ledger.register._conflict_reason).
_EARLIER_BATCH = re.compile(r"(by batch )([\w.-]+)( \(row )")


def batch_links(text: str) -> Markup:
    """A conflict's reason, escaped, with the earlier batch it names linked to its page: "look
    that payout up" sent the operator to search the batches list for a 20-character id."""
    out, at = Markup(""), 0
    for found in _EARLIER_BATCH.finditer(text):
        link = Markup('<a href="/batches/{0}">{0}</a>').format(found[2])
        out += escape(text[at : found.start(2)]) + link
        at = found.end(2)
    return out + escape(text[at:])


def rechecked_line(ctx: ConsoleContext, batch_id: str) -> str | None:
    """What `payflow run` and `payflow status` say of the batch's figures: how many sent payouts
    no reconciliation re-fetched since their news, and when that happens; None when none."""
    n = ctx.ledger.not_rechecked(batch_id)
    if not n:
        return None
    return not_rechecked_line(n, batch_id, embedded=ctx.target.sandbox, console=True)


def why_no_report(state: str, counts: BatchCounts) -> str | None:
    """Why the batch page offers no reconciliation report yet; None when it offers one.

    Before a row was sent the report held only the file's rows, each "not sent yet" (or
    rejected): offered beside "awaiting approval" it read as if something had been paid."""
    if counts.at_service:
        return None
    if counts.rows and counts.rejected == counts.rows:
        return "every row was rejected, so nothing is to be paid: the rejects report says why"
    if state == "declined":
        return "the batch was declined and nothing of it was sent"
    return (
        "it comes once a row of this batch is sent (none is yet): it then holds each row's "
        "payout, status and statusMessage"
    )


def why_not_reconcile_batch(ctx: ConsoleContext, batch_id: str) -> str | None:
    """`why_not_reconcile` of the batch as the ledger holds it now."""
    counts = ctx.ledger.batch_counts(batch_id)
    return why_not_reconcile(batch_state(ctx, batch_id, counts), counts)


def _finished(counts: BatchCounts) -> str:
    """The state of a batch whose run is over: rows held as repeats are not failures."""
    if counts.all_completed:
        return "paid"
    if counts.held and counts.held + counts.completed == counts.rows:
        return "finished with rows held"
    return "finished with failures"


def approved_elsewhere(ctx: ConsoleContext, batch_id: str, state: str) -> tuple[str, ...]:
    """Who gave every approval step outside the console (`payflow approve`) of a batch still
    awaiting a checker here, whose "Approve and pay" then starts the payment; else empty."""
    if state != "awaiting approval":
        return ()
    status = approval_status(ctx.ledger, batch_id)
    return status.by if isinstance(status, Approved) else ()


def waiting_note(ctx: ConsoleContext, batch_id: str, state: str) -> str | None:
    """Why an approved batch waits for its payout run (what the checker was told); else None."""
    if state != APPROVED_WAITING:
        return None
    last = last_action(ctx.ledger, batch_id, PAY_WAITS)
    return last.detail if last is not None else None


def _ended(ctx: ConsoleContext, batch_id: str, counts: BatchCounts) -> str | None:
    """ "approval expired" or "stopped" (`payflow.ending`) for a batch with rows not sent: an
    expired batch read "uploaded" (or, in `payflow status`, "3 VALIDATED") as if it could still
    be paid."""
    if not counts.to_send:
        return None
    try:
        end = batch_end(ctx.ledger, batch_id)
    except PolicyError:
        return None
    if end is None or end.name == "declined":
        return None  # declined is read from the approvals and the action log above
    return "approval expired" if end.name == "expired" else "stopped"


def _state_from_ledger(ctx: ConsoleContext, batch_id: str, counts: BatchCounts) -> str:
    """The state of a batch the console never acted on (the command line, a deployment did):
    from its rows and approval records, so one paid or declined elsewhere does not read as
    "nothing to pay" or "uploaded"."""
    if any(r.decision == "decline" for r in ctx.ledger.approvals_of(batch_id)):
        return "declined"
    if (ended := _ended(ctx, batch_id, counts)) is not None:
        return ended
    if awaits_approval(ctx, batch_id, counts):
        # A deployment's run beats while it waits for its approval (hours, for a daily run):
        # paused there, it pays nothing yet; a checker approves it here, with `payflow approve`
        # or in Prefect's form.
        return "awaiting approval"
    if (counts.to_send or counts.pending) and run_alive(ctx, batch_id):
        return "paying"  # `payflow pay` or a deployment's run, beating in the ledger
    if counts.to_send and not counts.own_sent:
        # Nothing of its own sent yet: rows whose payout another batch made (and paid) do not
        # make it "finished with rows pending", with no Submit for its new rows.
        return "uploaded"
    sent = counts.rows - counts.to_send - counts.held - counts.rejected
    if sent == 0:
        return "nothing to pay"
    if counts.to_send or counts.pending:
        return "finished with rows pending"
    return _finished(counts)


def totals_text(totals: Sequence[CurrencyTotal]) -> str:
    """Per currency: the amount of the batch's payouts, whatever their state."""
    return _money_sums((total.currency, total.amount) for total in totals)


def _money_sums(amounts: Iterable[tuple[str, Decimal]]) -> str:
    """`1,500.00 RUB, 20 XOF`: the amounts summed per currency ("-" when there are none)."""
    sums: dict[str, Decimal] = {}
    for currency, amount in amounts:
        sums[currency] = sums.get(currency, Decimal(0)) + amount
    return ", ".join(money_words(a, c) for c, a in sorted(sums.items())) or "-"


NOT_REFUNDED_SHOWN = 200  # the rest are in the report
SHOWN_CONFLICTS = 50  # the rest are in the report


@dataclass(frozen=True)
class RefundBatch:
    """A refund batch as its page and the list show it, read from the ledger's refund book."""

    state: str
    by_status: dict[str, int]
    final: int
    # What this batch refunded (COMPLETED) and what it still holds (not final): a FAILED or
    # CANCELED refund was counted with them and read as money refunded.
    totals: str
    not_final: list[RefundRowView]
    # Rows whose refund an earlier batch made (same externalId and content): never sent again
    # here, so not in `totals`; their amounts apart, each with the batch that made it.
    earlier: list[RefundRowView] = field(default_factory=list)
    earlier_totals: str = "-"
    not_final_totals: str = "-"
    # Rows not refunded with why (`refunds.report.why_not_refunded`, as `payflow refund` says),
    # the first NOT_REFUNDED_SHOWN of them; counts alone did not say which rows to look at.
    not_refunded: list[tuple[RefundRowView, str]] = field(default_factory=list)
    not_refunded_more: int = 0

    @property
    def rows(self) -> int:
        """Source rows of the batch, rejected ones included."""
        return sum(self.by_status.values())

    @property
    def figures(self) -> str:
        """`1500.00 RUB refunded, 250.50 RUB not final yet`: this batch's own refunds."""
        text = "nothing refunded" if self.totals == "-" else f"{self.totals} refunded"
        if self.not_final_totals != "-":
            text += f", {self.not_final_totals} not final yet"
        return text


def refund_batch(ctx: ConsoleContext, batch_id: str) -> RefundBatch | None:
    """The batch's refunds per status, totals and those not final; None for another batch.

    A refund batch has no payouts: read as a payout batch it was "nothing to pay", 0 rows."""
    book = ctx.ledger.refunds
    if not book.batch_exists(batch_id):
        return None
    views = list(book.rows(batch_id))
    by_status = dict(Counter(view.state.value for view in views))
    not_final = [view for view in views if view.state in REFUND_OPEN_STATES]
    approval = standing(ctx.ledger, batch_id)
    if approval is not None and approval.waiting:
        state = "awaiting approval"  # over the policy's limits: nothing is refunded before
    elif approval is not None and approval.state in ("Declined", "Expired"):
        state = approval.state.lower()
    elif not_final:
        state = "refunds not final"  # MANUAL and PENDING hold the debit: not refunded yet
    elif set(by_status) == {RowState.COMPLETED.value}:
        state = "refunded"
    else:
        state = "finished with rows not refunded"
    # Counted as this batch's, an order refunded by an earlier batch read as refunded twice.
    earlier = [view for view in views if view.disposition is Disposition.ALREADY_KNOWN]
    own = [view for view in views if view.disposition is not Disposition.ALREADY_KNOWN]
    unrefunded = not_refunded(views)
    return RefundBatch(
        state,
        by_status,
        len(views) - len(not_final),
        _refund_sums(view for view in own if view.state is RowState.COMPLETED),
        not_final,
        earlier,
        _refund_sums(earlier),
        _refund_sums(view for view in own if view.state in REFUND_OPEN_STATES),
        [(view, why_not_refunded(view)) for view in unrefunded[:NOT_REFUNDED_SHOWN]],
        max(0, len(unrefunded) - NOT_REFUNDED_SHOWN),
    )


def _refund_sums(views: Iterable[RefundRowView]) -> str:
    """The refunds' amounts summed per currency ("-" for none)."""
    return _money_sums(
        (view.currency, view.amount)
        for view in views
        if view.currency is not None and view.amount is not None
    )


def approvers(ctx: ConsoleContext, batch_id: str) -> str:
    """Who approved (or declined) the batch."""
    names = [r.approver for r in ctx.ledger.approvals_of(batch_id)]
    done = last_action(ctx.ledger, batch_id, "approved", "declined")
    if done is not None and done.actor not in names:
        names.append(done.actor)
    return ", ".join(dict.fromkeys(names)) or "-"


def batch_page(ctx: ConsoleContext, page: int) -> tuple[list[BatchLine], int]:
    """One page of batches, newest first, and the number of pages."""
    size = ctx.page_size
    total = ctx.ledger.batch_count()
    rows = ctx.ledger.newest_batches(size, offset=(page - 1) * size)
    lines = []
    for row in rows:
        counts = ctx.ledger.batch_counts(row.batch_id)
        refunds = refund_batch(ctx, row.batch_id) if not counts.rows else None
        if refunds is not None:  # approved as payouts are, over the policy's limits
            state, shown, totals = refunds.state, refunds.rows, refunds.figures
            approved = approvers(ctx, row.batch_id)
            if refunds.earlier:
                totals += f" (and {refunds.earlier_totals} made by an earlier batch)"
        else:
            state, shown = batch_state(ctx, row.batch_id, counts), counts.rows
            totals = totals_text(ctx.ledger.batch_totals(row.batch_id))
            approved = approvers(ctx, row.batch_id)
        lines.append(
            BatchLine(
                batch_id=row.batch_id,
                source=row.source,
                created_at=row.created_at,
                state=state,
                rows=shown,
                totals=totals,
                made_by=row.made_by or "-",
                approved_by=approved,
            )
        )
    return lines, max(1, -(-total // size))


@dataclass(frozen=True)
class FinalFigures:
    """How far the rows to pay are: rows rejected in the file or refused as a conflict are never
    sent, so they are neither final nor left to do (before approval "6 of 21 final", a 28 %
    bar, counted them)."""

    final: int
    of: int
    rejected: int  # rejected in the file and refused as a conflict
    conflicts: int = 0  # of `rejected`, the rows refused as a known externalId, other content

    @property
    def line(self) -> str:
        """`0 of 15 final · 6 rejected in the file, 1 refused as a conflict, never sent`."""
        in_file = self.rejected - self.conflicts
        never = [
            *([f"{in_file} rejected in the file"] if in_file else []),
            *([f"{self.conflicts} refused as a conflict"] if self.conflicts else []),
        ]
        text = f"{self.final} of {self.of} final"
        return text + (f" · {', '.join(never)}, never sent" if never else "")


def final_figures(counts: BatchCounts) -> FinalFigures:
    """The batch's rows to pay that are final, of how many, beside those never sent."""
    return FinalFigures(
        counts.final - counts.rejected,
        counts.rows - counts.rejected,
        counts.rejected,
        counts.count(frozenset({RowState.CONFLICT})),
    )


def unsent_reason(ctx: ConsoleContext, batch_id: str, state: str) -> str | None:
    """Why the batch's VALIDATED rows are not sent, in an operator's words, or None."""
    if state == "declined":
        decline = next(
            (r for r in ctx.ledger.approvals_of(batch_id) if r.decision == "decline"), None
        )
        done = last_action(ctx.ledger, batch_id, "declined")
        who = decline.approver if decline else (done.actor if done else None)
        return unsent_words(declined_by=who or "a checker")
    if state == "awaiting approval":
        status = approval_status(ctx.ledger, batch_id)
        return unsent_words(expired=isinstance(status, Expired), waiting=True)
    return None


def state_rows(
    ctx: ConsoleContext, batch_id: str, counts: BatchCounts, state: str
) -> list[tuple[str, str, int]]:
    """(state, the operator's words for it, rows) of the "Rows by state" table."""
    unsent = unsent_reason(ctx, batch_id, state)
    return [(name, state_words(name, unsent), n) for name, n in sorted(counts.by_state.items())]


def progress(ctx: ConsoleContext, batch_id: str) -> dict[str, object]:
    """The small JSON the batch page polls: rows per state and whether the run is over."""
    counts = ctx.ledger.batch_counts(batch_id)
    state = batch_state(ctx, batch_id, counts)
    figures = final_figures(counts)
    return {
        "batch": batch_id,
        "rows": counts.rows,
        "final": counts.final,
        "to_pay": figures.of,
        "to_pay_final": figures.final,
        "final_line": figures.line,
        "by_state": dict(sorted(counts.by_state.items())),
        "states": state_rows(ctx, batch_id, counts, state),
        "state": state,
        "running": state == "paying",
    }


SHOWN_DETAILS = 200  # failed rows whose sent details the page shows beside the correction


@dataclass
class Summary:
    """The reconciliation summary: outcomes for the chart, failure groups, findings, and the
    amounts per currency paid, failed and pending."""

    outcomes: list[tuple[str, int]] = field(default_factory=list)
    amounts: list[AmountLine] = field(default_factory=list)
    groups: list[PreviewGroup] = field(default_factory=list)
    findings: list[tuple[int, str, str, str, str]] = field(default_factory=list)
    # Rows refused as a known externalId with other content: how many, and the first ones.
    conflicts: tuple[int, list[RejectedLine]] = (0, [])
    rerun_batches: list[RerunLine] = field(default_factory=list)
    # Each failed row's details a rerun may correct, as sent: requisites masked, the bank.
    sent_details: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RerunLine:
    """A rerun of the batch as its page lists it: every rerun id starts with the batch's own,
    so it is told apart by its number, its own end and its rows."""

    batch_id: str
    number: int  # 1 for the oldest rerun
    rows: int
    state: str

    @property
    def short_id(self) -> str:
        """`…-rerun-3fa9c1d20b4e`: the part of the id that differs from the batch's."""
        return rerun_end(self.batch_id)


def rerun_end(batch_id: str) -> str:
    """`…-rerun-3fa9c1d20b4e`: the end of a rerun's id, its own (the whole id of another)."""
    _, marker, own = batch_id.rpartition("-rerun-")
    return f"…{marker}{own}" if marker else batch_id


def summary(ctx: ConsoleContext, batch_id: str) -> Summary:
    """Outcome counts, failed rows grouped by statusMessage (rerun candidates), findings."""
    out = Summary()
    by_outcome: dict[str, int] = {}
    totals = ctx.ledger.outcome_totals(batch_id)
    for total in totals:
        by_outcome[str(total.outcome)] = by_outcome.get(str(total.outcome), 0) + total.rows
    out.outcomes = sorted(by_outcome.items(), key=lambda kv: -kv[1])
    out.amounts = amount_lines(totals)
    candidates = find_candidates(
        ctx.ledger, batch_id, classifier(ctx.settings.failure_classes_path)
    )
    out.groups = group_candidates(candidates.eligible)
    out.conflicts = conflicts(ctx, batch_id)
    for candidate in candidates.eligible[:SHOWN_DETAILS]:
        sent = ctx.ledger.payout_instruction(candidate.external_id)
        if sent is not None:
            bank = f", bankName {sent.bank_name}" if sent.bank_name else ""
            out.sent_details[candidate.external_id] = (
                f"sent to {mask_requisites(sent.requisites)}{bank}"
            )
    out.findings = [
        (f.row_number, f.kind, f.state, f.detail, f.acknowledgement or "")
        for f in ctx.ledger.findings(batch_id)
    ]
    for number, rerun_id in enumerate(ctx.ledger.rerun_batches(batch_id), start=1):
        counts = ctx.ledger.batch_counts(rerun_id)
        state = batch_state(ctx, rerun_id, counts)
        if state == "awaiting approval" and isinstance(
            approval_status(ctx.ledger, rerun_id), Approved
        ):
            state = "awaiting a checker"
        out.rerun_batches.append(RerunLine(rerun_id, number, counts.rows, state))
    return out


@dataclass(frozen=True)
class EarlierGroup:
    """Rows of a rerun whose earlier attempts failed the same way: the group and its rows."""

    group: PreviewGroup
    rows: list[EarlierFailure]


def earlier_groups(earlier: Sequence[EarlierFailure]) -> list[EarlierGroup]:
    """A rerun's rows grouped by statusMessage and failure class, as the maker chose them:
    do_not_retry first, then largest first (a rerun of hundreds listed every row)."""
    members: dict[tuple[str, str], list[EarlierFailure]] = {}
    for row in earlier:
        members.setdefault(group_key(row), []).append(row)
    groups = [
        EarlierGroup(group, members[(group.message, group.failure_class)])
        for group in group_candidates(earlier)
    ]
    return sorted(groups, key=lambda g: g.group.failure_class != FailureClass.DO_NOT_RETRY)


def chart_bars(outcomes: list[tuple[str, int]]) -> list[tuple[str, int, float, int, bool]]:
    """(label, rows, bar width in %, y, unpaid) for the inline SVG chart; `unpaid`: one of the
    report's UNPAID_OUTCOMES, coloured alike (CANCELED read as neutral as pending)."""
    top = max((n for _, n in outcomes), default=0) or 1
    unpaid = {outcome.value for outcome in UNPAID_OUTCOMES}
    return [
        (label, n, 100.0 * n / top, 28 * i, label in unpaid)
        for i, (label, n) in enumerate(outcomes)
    ]
