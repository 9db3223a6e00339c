"""What the intake and pay flows return, and how a pay run's figures read.

Every figure comes from `BatchCounts` read from the ledger after the flow's last state change;
`SubmitStats` only says what this run itself sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from payflow.ledger import BatchCounts
from payflow.ledger.states import NOT_PAID_STATES
from payflow.paying import SubmitStats
from payflow.wording import not_rechecked_line


@dataclass(frozen=True)
class IntakeResult:
    """A file turned into a batch in the ledger: its id and figures, and what validation said."""

    batch_id: str
    source_name: str
    counts: BatchCounts
    summary: list[str]  # validation summary for the operator (problems, resolved banks)
    rejects_csv: str | None
    rejects_xlsx: str | None
    sandbox: bool
    already_registered: int = 0  # rows this batch id had registered before this intake


@dataclass(frozen=True)
class PayResult:
    """What a pay run did to a batch, with every figure read from the ledger at its end."""

    batch_id: str
    counts: BatchCounts
    sent: SubmitStats
    report_csv: str
    report_xlsx: str
    sandbox: bool
    pending: list[str] = field(default_factory=list)
    corrections: int = 0
    # Rows per state of each row's latest attempt, read with `counts`: a rerun (of this batch,
    # or of another holding the same row) may have paid a row the batch's own attempt failed.
    latest: dict[str, int] = field(default_factory=dict)
    # The one line saying the report could not be written (why, and the command that writes
    # it); "" when it was. The run still ends with its figures, exit 1 (never 2: money moved).
    report_error: str = ""
    # Sent payouts no reconciliation re-fetched yet: the run reads what webhooks and polls said.
    not_rechecked: int = 0

    @property
    def submitted(self) -> int:
        """Rows this run sent that now have a payout (found after a crash counts too)."""
        return self.sent.submitted

    @property
    def by_latest(self) -> BatchCounts:
        """The batch's rows counted by each row's latest attempt (its own when never rerun)."""
        return BatchCounts(self.batch_id, self.latest) if self.latest else self.counts

    @property
    def rerun_moved(self) -> bool:
        """True when a rerun's attempt stands for some row: `by_latest` differs from `counts`."""
        return self.by_latest.by_state != self.counts.by_state

    @property
    def all_completed(self) -> bool:
        """True only when every row of the batch is paid by its latest attempt: exit code 0."""
        return self.by_latest.all_completed

    def not_rechecked_line(self) -> str | None:
        """Whether the service was asked again about the payouts, and when it will be."""
        if not self.not_rechecked:
            return None
        return not_rechecked_line(self.not_rechecked, self.batch_id, embedded=self.sandbox)

    def as_json(self) -> dict[str, object]:
        """The machine-readable summary (`--json`)."""
        return {
            "batch_id": self.batch_id,
            "rows": self.counts.rows,
            "rejected": self.counts.by_state.get("REJECTED", 0),
            "submitted": self.submitted,
            "statuses": self.counts.statuses,
            **({"latest_statuses": self.by_latest.statuses} if self.rerun_moved else {}),
            "not_rechecked": self.not_rechecked,
            "report": self.report_xlsx or None,
            **({"report_error": self.report_error} if self.report_error else {}),
            "sandbox": self.sandbox,
        }

    def summary_markdown(self) -> str:
        """The Prefect summary artifact."""
        lines = [
            f"## Batch {self.batch_id}",
            "",
            "Embedded sandbox: no real money moved." if self.sandbox else "",
            f"Rows: {self.counts.rows}, rejected: {self.counts.by_state.get('REJECTED', 0)}, "
            f"submitted by this run: {self.submitted}",
            "",
            "| state | rows |",
            "|---|---|",
            *(f"| {state} | {count} |" for state, count in self.counts.statuses.items()),
            "",
            *(self._latest_markdown() if self.rerun_moved else []),
            *([line, ""] if (line := self.not_rechecked_line()) else []),
            f"Report: `{Path(self.report_xlsx).name}`"
            if self.report_xlsx
            else f"Report: {self.report_error}",
        ]
        return "\n".join(lines)

    def _latest_markdown(self) -> list[str]:
        rows = (f"| {state} | {n} |" for state, n in self.by_latest.statuses.items())
        return [
            "Rows by latest attempt (a rerun sent some again):",
            "",
            "| state | rows |",
            "|---|---|",
            *rows,
            "",
        ]

    def has_not_paid(self) -> bool:
        """True when some row ended FAILED, CANCELED, EXPIRED or SUBMIT_REJECTED."""
        return self.counts.count(NOT_PAID_STATES) > 0
