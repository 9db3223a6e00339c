"""Where a batch's approval stands, in the words `payflow status` and the batch list use for
refund and links batches (a payout batch's rows say it through their states)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from payflow.approvals.policy import PolicyError
from payflow.approvals.status import Approved, Declined, Expired, approval_status
from payflow.ledger import Ledger
from payflow.wording import counted


@dataclass(frozen=True, slots=True)
class Standing:
    """The approval of a batch now: its state, steps left, who approved or declined."""

    batch_id: str
    state: str  # Approved, Pending, Void, Declined, Expired
    steps_left: int = 0
    approved_by: tuple[str, ...] = ()
    declined_by: str | None = None
    note: str | None = None
    next_step: str = field(default="")

    @property
    def waiting(self) -> bool:
        """True while it needs approvals (nothing of it goes out before)."""
        return self.steps_left > 0 and self.state not in ("Declined", "Expired")

    def line(self, sent: str, held: str | None = None) -> str | None:
        """One line for the operator (`sent`: "refunded", "paid"; `held`: what waits, "nothing
        is refunded before" by default); None: approved by the policy alone, nothing to say."""
        if self.state == "Declined":
            why = f" ({self.note})" if self.note else ""
            return f"declined by {self.declined_by}{why}: nothing will be {sent}"
        if self.state == "Expired":
            return f"its approval expired before anyone approved it: nothing will be {sent}"
        if self.waiting:
            done = f"approved by {', '.join(self.approved_by)}; " if self.approved_by else ""
            return (
                f"{done}waiting for approval by {counted(self.steps_left, 'person')}, never its "
                f"maker: `payflow approve {self.batch_id}`; {held or f'nothing is {sent} before'}"
                + (f"; then {self.next_step}" if self.next_step else "")
            )
        if self.approved_by:
            return f"approved by {', '.join(self.approved_by)}"
        return None

    def as_json(self) -> dict[str, Any]:
        """The `approval` object of `payflow status --json`."""
        return {
            "state": self.state,
            "steps_left": self.steps_left,
            "approved_by": list(self.approved_by),
            "declined_by": self.declined_by,
        }


def standing(ledger: Ledger, batch_id: str, next_step: str = "") -> Standing | None:
    """The batch's approval standing under its recorded terms (None: the policy cannot be
    read; the run that sends it says so in one line)."""
    try:
        status = approval_status(ledger, batch_id)
    except PolicyError:
        return None
    name = type(status).__name__
    if isinstance(status, Approved):
        return Standing(batch_id, name, approved_by=status.by)
    if isinstance(status, Declined):
        return Standing(batch_id, name, declined_by=status.by, note=status.note)
    if isinstance(status, Expired):
        return Standing(batch_id, name)
    by = tuple(getattr(status, "by", ()))
    return Standing(batch_id, name, status.steps_left, by, next_step=next_step)
