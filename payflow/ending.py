"""How a batch with rows never sent ended, and what an operator does next: declined, approval
expired, or stopped by an operator. One home for the words `payflow status`, the batch list
and the pay run's artifact use, read from the ledger.

A declined or expired batch is never paid: `payflow pay` refuses it, so "payflow pay ... sends
each once" was wrong advice. Its externalIds stay with it (a file registered again is the same
batch; the same rows in another file are "already known"), so the rows go again only under new
externalIds. A stopped batch keeps every row in the ledger and `payflow pay` goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

from payflow.approvals.status import ApprovalStatus, Approved, Declined, Expired, approval_status
from payflow.ledger import Ledger
from payflow.ledger.actions import last_action
from payflow.wording import counted

STOPPED = "pay_stopped"  # the action `payflow stop` records
# Actions after which a stop no longer says how the batch stands: a run was started again.
STARTED_AGAIN = ("pay_started", "pay_resumed")
NEW_EXTERNAL_IDS = (
    "this batch is never paid: to pay its rows, send them in a new file with new externalIds "
    "(the same externalIds stay with this batch)"
)


@dataclass(frozen=True, slots=True)
class BatchEnd:
    """An end state of a batch with rows never sent: its name, what happened, what next."""

    name: str  # "declined", "expired", "stopped"
    said: str
    next_step: str

    def line(self) -> str:
        return f"{self.said}: {self.next_step}"


def batch_end(
    ledger: Ledger, batch_id: str, approval: ApprovalStatus | None = None
) -> BatchEnd | None:
    """The batch's end state while it has rows not sent; None when it has none, or no end.
    `approval`: its approval status as the caller has just read it (None: read here)."""
    unsent = ledger.batch_counts(batch_id).to_send
    if not unsent:
        return None
    rows = counted(unsent, "row")
    status = approval if approval is not None else approval_status(ledger, batch_id)
    if isinstance(status, Declined):
        note = f" ({status.note})" if status.note else ""
        return BatchEnd(
            "declined", f"declined by {status.by}{note}; {rows} never sent", NEW_EXTERNAL_IDS
        )
    if isinstance(status, Expired):
        return BatchEnd(
            "expired",
            f"its approval expired at {status.expired_at} before anyone approved it; {rows} never "
            "sent",
            NEW_EXTERNAL_IDS,
        )
    stop = last_action(ledger, batch_id, STOPPED, *STARTED_AGAIN)
    if stop is not None and stop.action == STOPPED:
        approve = "" if isinstance(status, Approved) else f"`payflow approve {batch_id}`, then "
        return BatchEnd(
            "stopped",
            f"stopped by {stop.actor} at {stop.at:%Y-%m-%d %H:%M} UTC; {rows} not sent, every "
            "row in the ledger",
            f"{approve}`payflow pay {batch_id}` sends each once (a row left SUBMITTING is looked "
            "up first)",
        )
    return None
