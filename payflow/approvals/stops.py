"""How a pay, refund or rerun run stops at its approval gate: one line for the operator each.

Kept apart from the gate's flow (`payflow.flows.approval`), so a command can refuse a batch that
waits for approval before it loads Prefect."""

from __future__ import annotations

from typing import TYPE_CHECKING

from payflow.expected import ExpectedFailure
from payflow.wording import counted

if TYPE_CHECKING:
    from payflow.approvals.status import Pending, Void


class BatchStopped(ExpectedFailure):
    """The batch stopped before its first payout (balance, approval); nothing was paid."""


class ApprovalNeeded(BatchStopped):
    """The batch needs approvals it does not have (Pending or Void), and this run may not wait
    for them."""

    def __init__(self, batch_id: str, steps_left: int, status_name: str) -> None:
        super().__init__(
            f"batch {batch_id} is waiting for approval by {counted(steps_left, 'person')}: "
            f"payflow approve {batch_id}"
        )
        self.batch_id = batch_id
        self.steps_left = steps_left
        self.status_name = status_name

    @classmethod
    def of(cls, batch_id: str, status: Pending | Void) -> ApprovalNeeded:
        """The stop for a batch whose approval `status` is still missing people."""
        return cls(batch_id, status.steps_left, type(status).__name__)


class NotApproved(BatchStopped):
    """The batch was declined, or its approval expired: it will not be paid."""

    def __init__(self, message: str, status_name: str) -> None:
        super().__init__(message)
        self.status_name = status_name
