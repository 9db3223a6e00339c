"""Whether a links batch's claims may pay: its approval under the terms recorded when its maker
submitted it, as for a payout batch.

A links batch over the policy's limits gets no claim URL until a checker approves it (nothing to
send a recipient, nothing that opens on a refusal); the claims server checks the same record
before it mints a widget link, so a batch declined after its claims went out pays nobody. A links
batch registered before links had approvals (no `batches` row) keeps its claims as issued.
"""

from __future__ import annotations

from dataclasses import dataclass

from payflow.approvals import ApprovalStatus, Approved, Declined, Expired, approval_status
from payflow.ledger import Ledger
from payflow.wording import counted


@dataclass(frozen=True, slots=True)
class LinksApproval:
    """A links batch's approval now; `status` None for a batch from before approvals."""

    batch_id: str
    status: ApprovalStatus | None

    @property
    def may_pay(self) -> bool:
        """True when its claims may be issued and answered."""
        return self.status is None or isinstance(self.status, Approved)

    @property
    def steps_left(self) -> int:
        """Approvals still needed (0 when approved, declined or expired)."""
        return int(getattr(self.status, "steps_left", 0))

    def line(self) -> str:
        """Why no claim is issued, and what to do: one line for the operator."""
        batch = self.batch_id
        if isinstance(self.status, Declined):
            why = f" ({self.status.note})" if self.status.note else ""
            return f"batch {batch} was declined by {self.status.by}{why}: no claim is issued"
        if isinstance(self.status, Expired):
            return f"batch {batch}: its approval expired: no claim is issued"
        people = counted(self.steps_left, "person")
        return (
            f"batch {batch} is waiting for approval by {people}, never its maker: "
            f"`payflow approve {batch}`; then `payflow links --reissue {batch}` writes its "
            "claim URLs"
        )


def links_approval(ledger: Ledger, batch_id: str) -> LinksApproval:
    """The batch's approval under its recorded terms (recorded now, with no maker, for a batch
    registered without them)."""
    from payflow.acts.register import ensure_terms  # the acts import the console's operators

    if not ledger.batch_exists(batch_id):
        return LinksApproval(batch_id, None)
    ensure_terms(ledger, batch_id)
    return LinksApproval(batch_id, approval_status(ledger, batch_id))
