"""What a scheduled reconciliation leaves for a person: batches with open findings or payouts
the service did not answer, said in one line.

A reconcile run that found a payout corrected to FAILED after it was COMPLETED (money reported
paid that was not) read Completed in Prefect, like one that found nothing; `payflow reconcile`
exits 1 for the same batch. The flows end Failed with this line instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from payflow.wording import counted

# The name of the Failed state of a reconcile run that left something to look at.
NEEDS_ATTENTION = "Open findings"
SHOWN_BATCHES = 5


class Reconciled(Protocol):
    """One batch's reconciliation, as the flows' tasks return it."""

    @property
    def batch_id(self) -> str: ...
    @property
    def open_findings(self) -> int: ...
    @property
    def unanswered(self) -> int: ...
    @property
    def corrected(self) -> int: ...


def needing_attention(outcomes: Iterable[Reconciled]) -> list[Reconciled]:
    """The batches `payflow reconcile` would exit 1 for: open findings, or payouts unanswered."""
    return [o for o in outcomes if o.open_findings or o.unanswered]


def attention_line(batches: Sequence[Reconciled]) -> str:
    """One line naming each batch left to look at, what is open in it and the command to read it."""
    parts = [_batch_part(b) for b in batches[:SHOWN_BATCHES]]
    more = len(batches) - SHOWN_BATCHES
    if more > 0:
        parts.append(f"and {counted(more, 'more batch')}")
    return (
        f"{counted(len(batches), 'batch')} to look at: {'; '.join(parts)}"
        " (payflow findings BATCH_ID lists them)"
    )


def _batch_part(batch: Reconciled) -> str:
    what = []
    if batch.open_findings:
        what.append(f"{counted(batch.open_findings, 'open finding')}")
    if batch.corrected:
        what.append(f"{counted(batch.corrected, 'payout')} corrected after completion")
    if batch.unanswered:
        what.append(f"{counted(batch.unanswered, 'payout')} unanswered by the service")
    return f"{batch.batch_id} {', '.join(what)}"
