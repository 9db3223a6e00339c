"""The operator's choice of rows to rerun: by row numbers, statusMessage, class, or all."""

from __future__ import annotations

from dataclasses import dataclass

from payflow.rerun.candidates import Candidate, Candidates, RerunRefused
from payflow.rerun.classify import FAILURE_CLASSES


@dataclass(frozen=True, slots=True)
class ChoiceWords:
    """How the reader names the choices: `payflow rerun`'s flags, or the `rerun-failed`
    deployment's parameters in Prefect's UI (a reader there has no command line)."""

    rows: str
    failure_class: str
    choose: str  # what to do when nothing is chosen
    confirm: str  # ... and then, to send
    send: str  # what to do to send the rows chosen


CLI_WORDS = ChoiceWords(
    rows="--rows",
    failure_class="--class",
    choose="choose rows with --rows, --message, --class or --all-failed",
    confirm="and confirm with --reviewed",
    send="add --reviewed to send them",
)
DEPLOYMENT_WORDS = ChoiceWords(
    rows="parameter rows",
    failure_class="parameter failure_class",
    choose="choose rows with the parameters rows, message, failure_class or all_failed,",
    confirm="then run the deployment again with reviewed: true",
    send="run the deployment again with the same parameters and reviewed: true to send them",
)
CHOOSE_ROWS = CLI_WORDS.choose


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


def parse_selection(
    rows: str | None,
    message: str | None,
    failure_class: str | None,
    all_failed: bool,
    words: ChoiceWords = CLI_WORDS,
) -> Selection:
    """The operator's choice, checked before the ledger is read; RerunRefused names the flag or
    parameter to fix in the reader's `words`."""
    if failure_class and failure_class not in FAILURE_CLASSES:
        known = ", ".join(FAILURE_CLASSES)
        raise RerunRefused(f"{words.failure_class} {failure_class!r} is not one of {known}")
    return Selection(parse_rows(rows, words), message, failure_class, all_failed)


def parse_rows(text: str | None, words: ChoiceWords = CLI_WORDS) -> tuple[int, ...]:
    """`4,9` or `4-6,9` as row numbers; RerunRefused on anything else."""
    if not text:
        return ()
    rows: list[int] = []
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise RerunRefused(
                f"{words.rows}: {part.strip()!r} is not a row number or range like 4-6"
            )
        rows.extend(range(int(first), int(last or first) + 1))
    return tuple(dict.fromkeys(rows))


def choose(candidates: Candidates, selection: Selection) -> list[Candidate]:
    """The eligible rows the selection names (checked by `parse_selection`); refuses rows named
    that may not be rerun."""
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
