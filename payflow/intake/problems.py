"""What validation found: one Problem per row, column and rule, and the report of a whole batch."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property

from payflow.expected import ExpectedFailure
from payflow.intake.columns import PERSONAL_COLUMNS
from payflow.model import PayoutInstruction
from payflow.redact import mask_rejected, printable

FILE_ROW = 1  # problems about the file as a whole (its header) are reported on row 1
MERGED_CELL = "merged_cell"  # an XLSX cell under a merged cell (payflow.intake.xlsx)


class BatchFileError(ExpectedFailure):
    """The file cannot be read as a batch; the message is one line for the operator (exit 2)."""


class SheetToChoose(BatchFileError):
    """A workbook whose sheet the operator must choose: `problem` says why, `sheets` lists
    those to choose from; the message ends with the command line's way (`--sheet`), which a
    console replaces with its own."""

    def __init__(self, problem: str, sheets: Sequence[str], cli_hint: str) -> None:
        super().__init__(f"{problem}: {cli_hint}")
        self.problem = problem
        self.sheets = tuple(sheets)


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken rule: spreadsheet row, column, rule name and a sentence a person understands."""

    row: int
    column: str
    rule: str
    message: str
    external_id: str = ""
    value: str = ""  # already masked when the column holds personal data

    def as_json(self) -> dict[str, object]:
        """The shape `payflow validate --json` prints."""
        return {"row": self.row, "column": self.column, "rule": self.rule, "message": self.message}


@dataclass(frozen=True, slots=True)
class RejectedCells:
    """What a rejected row's own cells said, kept so the report shows the operator the row to
    fix: a currency only when it is an ISO 4217 code as written, an amount only when its cell
    broke no rule, the requisites masked to their last four characters (two rejected rows of
    one recipient are told from another's, and the whole never leaves intake)."""

    currency: str | None = None
    amount: Decimal | None = None
    payment_type: str | None = None
    name: str | None = None
    requisites_masked: str | None = None  # its last four characters only (design invariant 6)


def not_read(problems: Sequence[Problem], read_problems: Sequence[Problem]) -> list[Problem]:
    """Drop rules broken only because a cell could not be read: its read problem names the cause
    (an account stored as a number is not also "requisites are required")."""
    unread = {(p.row, p.column) for p in read_problems}
    return [p for p in problems if (p.row, p.column) not in unread]


def shown_value(column: str, value: str) -> str:
    """The value as a report may show it: personal data masked to its last four characters, the
    marks that are no letter or digit (a `+`, a space) left visible (redact.mask_rejected)."""
    return mask_rejected(value) if column in PERSONAL_COLUMNS else value


@dataclass(frozen=True, slots=True)
class BankResolution:
    """An SBP bankName given as a name and the bank id it was resolved to."""

    row: int
    given: str
    bank_id: str


@dataclass
class ValidationReport:
    """Everything `payflow validate` shows and `payflow run` submits for one batch file."""

    batch_id: str
    source_name: str
    rows: int
    sheet: str | None = None  # the XLSX sheet read (None for a CSV)
    rejects: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    bank_resolutions: list[BankResolution] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)  # checks skipped for lack of a lookup
    # Row number -> "bank", "service" or "bank,service": a valid row whose check waited for a
    # list this process could not fetch (no API token); the paying process checks it first.
    unchecked: dict[int, str] = field(default_factory=dict)
    # SBP phones are sent exactly as given, so this stays empty; kept for the report's shape.
    phone_reformattings: list[tuple[int, str, str]] = field(default_factory=list)
    # Row number -> what a rejected row's cells said: the reports count it under the currency
    # it asked for and show its amount, paymentType and name.
    reject_cells: dict[int, RejectedCells] = field(default_factory=dict)
    # Rows that may be paid, and how to build their instructions: `payflow validate` counts
    # them and never sends one, and a million instructions take about 0.8 s to build.
    valid: int = 0
    # Derived externalId -> its first derivation, where they differ (identity.py): registering
    # keeps the first one for a row the ledger already holds under it.
    legacy_ids: dict[str, str] = field(default_factory=dict)
    build_instructions: Callable[[], list[PayoutInstruction]] = field(
        default=list, repr=False, compare=False
    )

    @cached_property
    def instructions(self) -> list[PayoutInstruction]:
        """An instruction per valid row, in row order; built on first use."""
        built = self.build_instructions()
        if len(built) != self.valid:  # the count printed must be the rows registered
            raise RuntimeError(f"{len(built)} instructions built for {self.valid} valid rows")
        return built

    @property
    def rejected(self) -> int:
        """Rows with at least one reject."""
        return len({p.row for p in self.rejects if p.row != FILE_ROW})

    def rejected_rows(self) -> dict[int, list[str]]:
        """Row number -> its reasons, `column: message (rule)`, for the ledger's REJECTED rows."""
        reasons: dict[int, list[str]] = defaultdict(list)
        for problem in self.rejects:
            reasons[problem.row].append(
                printable(f"{problem.column}: {problem.message} ({problem.rule})")
            )
        return dict(reasons)

    def external_id_of(self, row: int) -> str:
        """The externalId a rejected row carries (given or derived), empty when unknown."""
        for problem in self.rejects:
            if problem.row == row and problem.external_id:
                return problem.external_id
        return ""

    def as_json(self) -> dict[str, object]:
        """`{"batch_id", "rows", "valid", "rejected", "problems", "warnings"}` for `--json`."""
        return {
            "batch_id": self.batch_id,
            "rows": self.rows,
            "valid": self.valid,
            "rejected": self.rejected,
            "problems": [p.as_json() for p in self.rejects],
            "warnings": [p.as_json() for p in self.warnings],
        }
