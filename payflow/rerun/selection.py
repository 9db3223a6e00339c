"""The operator's choice of rows to rerun: by row numbers, statusMessage, class, or all."""

from __future__ import annotations

from dataclasses import dataclass

from payflow.rerun.candidates import Candidate, Candidates, RerunRefused
from payflow.rerun.classify import FAILURE_CLASSES

CHOOSE_ROWS = "choose rows with --rows, --message, --class or --all-failed"
"""What to do when nothing is chosen: the preview, the command line and the flow say it alike."""


@dataclass(frozen=True, slots=True)
class Selection:
    """`--rows`, `--message`, `--class`, `--all-failed`; several narrow the choice together."""

    rows: tuple[int, ...] = ()
    message: str | None = None
    failure_class: str | None = None
    all_failed: bool = False

    @property
    def empty(self) -> bool:
        """True when the operator chose nothing (a preview of every eligible row)."""
        return not (self.rows or self.message or self.failure_class or self.all_failed)


def parse_rows(text: str | None) -> tuple[int, ...]:
    """`4,9` or `4-6,9` as row numbers; RerunRefused on anything else."""
    if not text:
        return ()
    rows: list[int] = []
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise RerunRefused(f"--rows: {part.strip()!r} is not a row number or range like 4-6")
        rows.extend(range(int(first), int(last or first) + 1))
    return tuple(dict.fromkeys(rows))


def choose(candidates: Candidates, selection: Selection) -> list[Candidate]:
    """The eligible rows the selection names; refuses rows named that may not be rerun."""
    if selection.failure_class and selection.failure_class not in FAILURE_CLASSES:
        known = ", ".join(FAILURE_CLASSES)
        raise RerunRefused(f"--class {selection.failure_class!r} is not one of {known}")
    if selection.rows:
        named = [i for i in candidates.ineligible if i.row_number in selection.rows]
        refused = [i for i in named if not i.awaiting_payment]
        if refused:
            lines = "; ".join(f"row {i.row_number} is {i.reason}" for i in refused)
            raise RerunRefused(f"not rerun, nothing was sent: {lines}")
        present = {c.row_number for c in candidates.eligible} | {i.row_number for i in named}
        missing = [str(r) for r in selection.rows if r not in present]
        if missing:
            raise RerunRefused(f"batch {candidates.batch_id} has no rows {', '.join(missing)}")
    chosen = [
        c
        for c in candidates.eligible
        if (not selection.rows or c.row_number in selection.rows)
        and (
            not selection.message
            or (c.status_message or "").casefold() == selection.message.strip().casefold()
        )
        and (not selection.failure_class or c.failure_class == selection.failure_class)
    ]
    return chosen
