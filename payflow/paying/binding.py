"""What an approval is bound to: the batch's content hash and what it has left to pay.

Both come from the ledger. The digest is taken when a person approves and taken again just
before the first payout; any difference (another batch paid a shared row, the ledger was
edited, a different batch) voids the approval and nothing is sent.
"""

from __future__ import annotations

import hashlib

from payflow.ledger import BatchCounts
from payflow.model import canonical_amount


class ApprovalVoided(Exception):
    """The batch changed after it was approved; nothing was paid. Approve it again."""


def approval_digest(counts: BatchCounts) -> str:
    """SHA-256 of the batch id, its content hash and its totals still to pay."""
    digest = hashlib.sha256(f"{counts.batch_id}\n{counts.content_hash}".encode())
    for total in counts.to_pay:
        line = f"\n{total.currency}\t{total.payment_type}\t{total.rows}\t"
        digest.update((line + canonical_amount(total.amount)).encode())
    return digest.hexdigest()


def check_approval(approved_digest: str, counts: BatchCounts) -> None:
    """Raise `ApprovalVoided` unless the batch is still what was approved."""
    if approval_digest(counts) != approved_digest:
        raise ApprovalVoided(
            f"batch {counts.batch_id} changed after it was approved (content or totals to pay "
            "differ); nothing was paid: review and approve it again"
        )
