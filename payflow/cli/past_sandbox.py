"""A batch whose payouts went to a past run's embedded sandbox: that sandbox ended with its
run, and a new one knows none of them. Asking it would read every such payout as missing at
the service (a false finding) and follow the unfinished ones until the deadline."""

from __future__ import annotations

from pathlib import Path

from payflow.cli.app import fail
from payflow.cli.setup import failure_classes
from payflow.ledger import BatchCounts, Ledger, RowState
from payflow.ledger.states import FINAL_STATUSES, PENDING_STATES, POLLABLE_STATES
from payflow.paying import SubmitStats
from payflow.run_results import PayResult
from payflow.runtime import open_ledger
from payflow.settings import Settings
from payflow.wording import counted


def sent_to_a_past_sandbox(counts: BatchCounts) -> int:
    """Rows with a payout (or a POST in doubt) at an earlier process's embedded sandbox: before
    this process pays, every payout a batch holds went to a sandbox that is gone."""
    return counts.count(PENDING_STATES, FINAL_STATUSES)


def left_behind(counts: BatchCounts) -> int:
    """Rows a past run's embedded sandbox took with it when the batch still has rows to follow
    or to send (a run on a new sandbox refuses such a batch), else 0."""
    gone = sent_to_a_past_sandbox(counts)
    return gone if counts.pending or counts.new else 0


def refunds_left_behind(ledger: Ledger, batch_id: str) -> int:
    """Refunds of a refund batch that a past run's embedded sandbox took with it and a run would
    still follow: sent (or in doubt) and not final, or COMPLETED with the order's REFUND unseen.
    Rows never sent go to a new sandbox as well as to the old one: its orders are the same."""
    book = ledger.refunds
    sent = [ref for ref in book.unfinished(batch_id) if ref.state is not RowState.VALIDATED]
    return len(sent) + len(book.awaiting_order_status(batch_id))


def stranded(settings: Settings, batch_id: str) -> int:
    """`left_behind` of a payout batch, or `refunds_left_behind` of a refund batch, as the ledger
    holds it on the embedded sandbox; 0 against an API, which keeps its objects between runs."""
    if not settings.uses_sandbox:
        return 0
    with open_ledger(settings) as ledger:
        return left_behind(ledger.batch_counts(batch_id)) + refunds_left_behind(ledger, batch_id)


def refuse_refunds_left_behind(settings: Settings, batch_id: str) -> None:
    """Stop `payflow refund` before anything is sent when a past run's embedded sandbox holds
    refunds it would follow: a new sandbox knows none of them, and the run followed them to the
    deadline (15 minutes by default) to report them not final."""
    if gone := stranded(settings, batch_id):
        fail(
            f"refund batch {batch_id}: {counted(gone, 'refund')} went to a past run's embedded "
            f"sandbox, which ended with that run, so nothing can follow {_them(gone)} now; "
            "nothing was sent. To try the file again on the sandbox, use a fresh ledger "
            "(another PAYFLOW_HOME)"
        )


def refunds_gone_heading(settings: Settings, batch_id: str) -> str | None:
    """`payflow status`'s heading over a refund batch's refunds not final when a past run's
    embedded sandbox took them (`payflow refund FILE` again refuses the batch), else None."""
    if not (gone := stranded(settings, batch_id)):
        return None
    return (
        f"{counted(gone, 'refund')} went to a past run's embedded sandbox, which ended with that "
        f"run, so nothing can follow {_them(gone)}; to try the file again on the sandbox, use a "
        "fresh ledger (another PAYFLOW_HOME)"
    )


def _them(count: int) -> str:
    return "it" if count == 1 else "them"


def resume_hint(settings: Settings, batch_id: str, resume: str) -> str:
    """How to go on after a stop: `resume`, unless this run's embedded sandbox, which ends with
    it, holds payouts the batch still follows or has rows left beside them; the run named would
    start a new sandbox and refuse the batch (`as_the_ledger_holds_it`)."""
    if stranded(settings, batch_id):
        with open_ledger(settings) as ledger:
            counts = ledger.batch_counts(batch_id)
        # Rows the service answered apart from rows claimed for sending when the stop came: one
        # POST and 399 claimed read "400 rows went to this run's embedded sandbox".
        sent = counts.count(POLLABLE_STATES, FINAL_STATUSES)
        claimed = counts.count(frozenset({RowState.SUBMITTING}))
        went = f"{counted(sent, 'row')} {'was' if sent == 1 else 'were'} sent to this run's"
        doubt = (
            f", and {counted(claimed, 'row')} being sent when it stopped may have reached it,"
            if claimed
            else ""
        )
        return (
            f"{went} embedded sandbox{doubt} which ends with this run, so no run can resume the "
            "batch; to run the file on the sandbox again, use a fresh ledger (another "
            "PAYFLOW_HOME)"
        )
    return f"Resume with: {resume}"


def as_the_ledger_holds_it(settings: Settings, batch_id: str, out: Path | None) -> PayResult | None:
    """On the embedded sandbox, a batch some of whose rows a past run sent: its figures from the
    ledger and a report written from it alone when nothing is left to send or follow (the file
    run again); a one-line stop when something is. None when no past run sent any row."""
    with open_ledger(settings) as ledger:
        counts = ledger.batch_counts(batch_id)
        gone = sent_to_a_past_sandbox(counts)
        if not gone:
            return None
        if left_behind(counts):
            fail(
                f"batch {batch_id}: {counted(gone, 'row')} went to a past run's embedded sandbox, "
                "which ended with that run, so nothing can follow or reconcile them now; nothing "
                "was sent. To try the file again on the sandbox, use a fresh ledger (another "
                "PAYFLOW_HOME)"
            )
        # Here, not at the top: reporting loads openpyxl, which `payflow status` (it asks only
        # `stranded`, on its common path) does without.
        from payflow.reporting import write_batch_report

        classes = failure_classes(settings)
        folder = out or settings.reports_location()
        report = write_batch_report(ledger, batch_id, folder, sandbox=True, classes=classes)
        latest = ledger.latest_summary(batch_id)
        unchecked = ledger.not_rechecked(batch_id)
    return PayResult(
        batch_id,
        counts,
        SubmitStats(),
        str(report.csv),
        str(report.xlsx),
        sandbox=True,
        latest=latest,
        not_rechecked=unchecked,
    )
