"""An uploaded file becomes a registered batch: the intake flow's functions, run in-process."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from payflow.acts import Actor, NotAllowed, submit
from payflow.acts.actor import CONSOLE
from payflow.connections import with_client
from payflow.console.context import ACCEPTED_SUFFIXES, ConsoleContext
from payflow.console.kept_uploads import KeptUpload
from payflow.console.operators import Operator
from payflow.intake import BatchFileError, Problem, RawBatch, ValidationReport, read_batch_file
from payflow.intake.kept import THIS_CONSOLE, fetches_lists, keep_fetched, validate_with_kept
from payflow.intake.lookups import Lookups, fetch_lookups, prefetched
from payflow.intake.problems import SheetToChoose
from payflow.intake.report_files import write_rejects_report
from payflow.intake.to_ledger import register_report
from payflow.ledger import BatchCounts
from payflow.ledger.actions import record_action
from payflow.schemas.lookups import sbp_phones
from payflow.schemas.validation import validate_rows
from payflow.storage import Place
from payflow.wording import counted


class UploadRefused(ValueError):
    """The upload is not a batch file the console takes; nothing was stored. `sheets`: the
    workbook's sheets to choose from when that is what it needs (the message is then only the
    problem: `sheet_choice_text` words the rest)."""

    def __init__(self, message: str, sheets: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.sheets = tuple(sheets)


@dataclass(frozen=True)
class UploadResult:
    """What the upload page shows: every problem, warnings and the ledger's counts."""

    batch_id: str
    source: str  # the file, and its sheet when it is a workbook's, as the ledger records them
    problems: list[Problem]
    warnings: list[Problem]
    counts: BatchCounts
    already_registered: int  # rows registered by an earlier upload of the same file
    # What was not checked here and why (without the token: how old the kept lists are).
    not_checked: list[str] = field(default_factory=list)
    # Which rows the paying process checks before sending, and what of them (`checked_later`).
    checked_later: list[str] = field(default_factory=list)


def safe_name(filename: str) -> str:
    """The file's own name without folders; refused unless it ends in .csv or .xlsx."""
    name = PurePath(filename.replace("\\", "/")).name.strip()
    if not name.lower().endswith(ACCEPTED_SUFFIXES):
        raise UploadRefused("only CSV or XLSX batch files are accepted; nothing was stored")
    return name


def looks_like(name: str, data: bytes) -> None:
    """An .xlsx is a zip; a .csv is text. Anything else is refused before it is read."""
    if name.lower().endswith(".xlsx") and not data.startswith(b"PK\x03\x04"):
        raise UploadRefused("this .xlsx file is not a spreadsheet; nothing was stored")
    if name.lower().endswith(".csv") and b"\x00" in data[:4096]:
        raise UploadRefused("this .csv file is not text; nothing was stored")


def take_upload(
    ctx: ConsoleContext, filename: str, data: bytes, operator: Operator, sheet: str | None = None
) -> UploadResult:
    """Read (an XLSX from `sheet` when chosen), validate with the service's lists (or, this
    console holding no API token, the lists a paying process kept), register the batch; record
    the maker."""
    name = safe_name(filename)
    looks_like(name, data)
    if not data:
        raise UploadRefused("the file is empty; nothing was stored")
    with tempfile.TemporaryDirectory(prefix="payflow-upload-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            raw = read_batch_file(path, sheet if name.lower().endswith(".xlsx") else None)
        except SheetToChoose as exc:
            # The command line's way (--sheet) is no flag here: the upload form chooses.
            raise UploadRefused(exc.problem, exc.sheets) from None
        except BatchFileError as exc:
            raise UploadRefused(f"{exc}; nothing was stored") from None

    report = validated(ctx, raw)
    outcome = register_report(ctx.ledger, report)
    maker = operator.name
    # The same file uploaded again by another maker stays the first maker's batch, as before.
    with suppress(NotAllowed):
        submit(ctx.ledger, report.batch_id, Actor(operator, CONSOLE))
    if report.rejects:
        write_rejects_report(report, ctx.batch_dir(report.batch_id))
    source = source_of(ctx, report.batch_id)
    # Each sheet's upload names its sheet: the history read "months.xlsx" for either.
    record_action(ctx.ledger, maker, "uploaded", report.batch_id, detail=source)
    return UploadResult(
        batch_id=report.batch_id,
        source=source,
        problems=list(report.rejects),
        warnings=list(report.warnings),
        counts=ctx.ledger.batch_counts(report.batch_id),
        already_registered=outcome.already_registered,
        not_checked=list(report.not_checked),
        checked_later=checked_later(report.unchecked),
    )


CHECKED_LATER = {"bank": "SBP bank", "service": "service, payment type and currency"}
ROWS_NAMED = 20


def checked_later(unchecked: dict[int, str]) -> list[str]:
    """A line per check left to the paying process (`ValidationReport.unchecked`: row ->
    "bank", "service" or both), naming the rows."""
    lines = []
    for check, words in CHECKED_LATER.items():
        rows = sorted(row for row, checks in unchecked.items() if check in checks.split(","))
        if not rows:
            continue
        named = ", ".join(map(str, rows[:ROWS_NAMED])) + (", …" if len(rows) > ROWS_NAMED else "")
        lines.append(
            f"{'Row' if len(rows) == 1 else 'Rows'} {named}: the paying process checks the "
            f"{words} before anything is sent, and never sends a row that fails"
        )
    return lines


def validated(ctx: ConsoleContext, raw: RawBatch) -> ValidationReport:
    """As the intake flow does (`fetches_lists`): with the token or on the sandbox, the lists
    fetched now and kept for consoles without it; without, the kept ones, rows marked."""
    if not fetches_lists(ctx.settings, sandbox=ctx.target.sandbox):
        return validate_with_kept(ctx.ledger, raw, speaker=THIS_CONSOLE)

    async def lookups(client: object) -> Lookups:
        return await fetch_lookups(client, sbp_phones(raw))  # type: ignore[arg-type]

    found = with_client(ctx.target, lookups)
    keep_fetched(ctx.ledger, found.services, found.banks)
    return validate_rows(raw, services=found.services, banks_for_phones=prefetched(found.banks))


def source_of(ctx: ConsoleContext, batch_id: str) -> str:
    """`payouts.xlsx, sheet March` as the ledger records the batch ("" when it has no batch)."""
    header = ctx.ledger.batch_header(batch_id)
    return header.source if header is not None else ""


def sheet_choice_text(problem: str, kept: KeptUpload | None, keep_seconds: float) -> str:
    """What the upload form says over its Sheet choice: with the file kept, choosing the sheet
    is enough; without (the kept files' cap reached), the file is chosen again too."""
    if kept is None:
        return (
            f"{problem}; nothing was stored. Choose the sheet below and the file again, then "
            "check it (or keep the payouts on one sheet)"
        )
    return (
        f"{problem}; nothing was registered yet. Choose the sheet below and check it: "
        f"{kept.filename} is kept for {counted(round(keep_seconds / 60), 'minute')} for this "
        "choice only (or keep the payouts on one sheet)"
    )


def rejects_file(ctx: ConsoleContext, batch_id: str, suffix: str) -> Place | None:
    """The batch's rejects report: written at upload, or by the run that took its file (the
    daily inbox's, on any worker sharing PAYFLOW_REPORTS_URL); None when there is none."""
    name = f"{batch_id}-rejects.{suffix}"
    for storage in (ctx.batch_dir(batch_id), ctx.reports()):
        if storage.exists(name):
            return storage.place(name)
    return None


def has_rejects(ctx: ConsoleContext, batch_id: str) -> bool:
    """True when the batch's rejects report can be downloaded; False too when the reports'
    storage is out of reach (the download then says so)."""
    try:
        return rejects_file(ctx, batch_id, "csv") is not None
    except OSError:
        return False
