"""What a scheduled reconciliation leaves for a person: batches with open findings or payouts
the service did not answer, said in one line.

A reconcile run that found a payout corrected to FAILED after it was COMPLETED (money reported
paid that was not) read Completed in Prefect, like one that found nothing; `payflow reconcile`
exits 1 for the same batch. The flows end Failed with this line instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from payflow.ledger.states import RowState
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
    @property
    def unsent(self) -> int: ...
    @property
    def unconfirmed(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Unfinished:
    """Rows a reconciliation cannot call done: never sent (VALIDATED, or SUBMITTING with no
    answer yet) and sent but not final (CREATED, PROCESSING)."""

    unsent: int
    unconfirmed: int

    def line(self, batch_id: str) -> str | None:
        """What `payflow reconcile` prints of them, or None when there are none."""
        parts = []
        if self.unsent:
            parts.append(f"{counted(self.unsent, 'row')} not sent yet")
        if self.unconfirmed:
            parts.append(f"{counted(self.unconfirmed, 'payout')} not final yet")
        if not parts:
            return None
        return f"{' and '.join(parts)}: payflow status {batch_id} says what comes next"


def unfinished(by_state: Mapping[str, int]) -> Unfinished:
    """The batch's unfinished rows from its counts per state (`BatchCounts.by_state`)."""
    return Unfinished(
        by_state.get(RowState.VALIDATED.value, 0) + by_state.get(RowState.SUBMITTING.value, 0),
        by_state.get(RowState.CREATED.value, 0) + by_state.get(RowState.PROCESSING.value, 0),
    )


def needing_attention(outcomes: Iterable[Reconciled]) -> list[Reconciled]:
    """The batches `payflow reconcile` would exit 1 for: open findings, payouts unanswered, rows
    not sent or not final (a killed run's rows are never "nothing to look at")."""
    return [o for o in outcomes if o.open_findings or o.unanswered or o.unsent or o.unconfirmed]


def attention_line(batches: Sequence[Reconciled]) -> str:
    """One line naming each batch left to look at, what is open in it and the command to read it."""
    parts = [_batch_part(b) for b in batches[:SHOWN_BATCHES]]
    more = len(batches) - SHOWN_BATCHES
    if more > 0:
        parts.append(f"and {counted(more, 'more batch')}")
    where = []
    if any(b.open_findings or b.unanswered or b.corrected for b in batches):
        where.append("payflow findings BATCH_ID lists them")
    if any(b.unsent or b.unconfirmed for b in batches):
        where.append("payflow status BATCH_ID says what comes next")
    return f"{counted(len(batches), 'batch')} to look at: {'; '.join(parts)} ({'; '.join(where)})"


def _batch_part(batch: Reconciled) -> str:
    what = []
    if batch.open_findings:
        what.append(f"{counted(batch.open_findings, 'open finding')}")
    if batch.corrected:
        what.append(f"{counted(batch.corrected, 'payout')} corrected after completion")
    if batch.unanswered:
        what.append(f"{counted(batch.unanswered, 'payout')} unanswered by the service")
    if batch.unsent:
        what.append(f"{counted(batch.unsent, 'row')} not sent yet")
    if batch.unconfirmed:
        what.append(f"{counted(batch.unconfirmed, 'payout')} not final yet")
    return f"{batch.batch_id} {', '.join(what)}"
