"""`payflow validate FILE`: read and check a batch, write the rejects report, pay nothing."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from payflow.api.errors import PaymentsApiError
from payflow.cli.app import app, fail
from payflow.cli.setup import prepare, writable_folder
from payflow.intake import BatchFileError, RawBatch, ValidationReport, read_batch_file
from payflow.intake.kept import fetches_lists, validate_with_kept
from payflow.intake.lookups import Lookups, fetch_lookups, prefetched
from payflow.opening import why_not_written
from payflow.redact import printable
from payflow.runtime import (
    NO_REAL_MONEY,
    ApiEndpoint,
    ConfigurationError,
    api_endpoint,
    client_for,
    open_ledger,
)
from payflow.schemas.lookups import sbp_phones
from payflow.schemas.rules import RulesTableError
from payflow.schemas.validation import validate_rows
from payflow.settings import Settings
from payflow.storage import place_name
from payflow.wording import api_trouble, report_not_written

EXIT_VALID, EXIT_REJECTS = 0, 1


def validate_with(
    endpoint: ApiEndpoint, raw: RawBatch, *, settings: Settings, strict: bool = False
) -> ValidationReport:
    """Validate a read batch with the banks and services lists of `endpoint`."""
    lookups = asyncio.run(_fetch_lookups(endpoint, raw, settings))
    return validate_rows(
        raw,
        services=lookups.services,
        banks_for_phones=prefetched(lookups.banks),
        strict=strict,
    )


async def _fetch_lookups(endpoint: ApiEndpoint, raw: RawBatch, settings: Settings) -> Lookups:
    async with client_for(endpoint, settings) as client:
        phones = sbp_phones(raw)
        return await fetch_lookups(client, phones, concurrency=min(settings.max_in_flight, 16))


def validate_without_token(
    raw: RawBatch, *, settings: Settings, strict: bool = False
) -> ValidationReport:
    """Validate with the lists a paying process kept in the ledger (this process holds no API
    token); the report says how old they are and which rows the paying process checks."""
    with open_ledger(settings) as ledger:
        return validate_with_kept(ledger, raw, strict=strict)


def validate_file(
    path: Path, *, settings: Settings, sheet: str | None = None, strict: bool = False
) -> tuple[ValidationReport, bool]:
    """Validate a batch file against the configured API (or the sandbox); report and is_sandbox."""
    raw = read_batch_file(path, sheet)  # an unreadable file fails before a sandbox starts
    if not fetches_lists(settings, sandbox=settings.uses_sandbox):
        return validate_without_token(raw, settings=settings, strict=strict), False
    with api_endpoint(settings) as endpoint:
        report = validate_with(endpoint, raw, settings=settings, strict=strict)
        return report, endpoint.is_sandbox


@app.command("validate")
def validate_command(
    file: Annotated[
        Path, typer.Argument(help="The batch: CSV (comma or semicolon) or XLSX.", readable=False)
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for the rejects report.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
    sheet: Annotated[str | None, typer.Option("--sheet", help="XLSX sheet to read.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings as rejects.")] = False,
) -> None:
    """Check every row of a batch; exit 0 all valid, 1 some rejected, 2 unreadable."""
    settings = prepare()
    writable_folder(out)  # before the file is read, as every command with --out
    try:
        report, sandbox = validate_file(file, settings=settings, sheet=sheet, strict=strict)
    except BatchFileError as exc:
        fail(str(exc))
    except (ConfigurationError, RulesTableError) as exc:
        fail(f"configuration: {exc}")
    except PaymentsApiError as exc:
        then = "the file is checked against its banks and services lists; nothing was checked"
        fail(api_trouble(exc, then=then, sandbox=settings.uses_sandbox))
    # Here, not at the top: the rejects report's writer loads the reconciliation report's
    # modules (the ledger, SQLAlchemy), which reading and validating a file do without.
    from payflow.intake.report_files import summary_lines, write_rejects_report

    out_dir = out if out is not None else settings.reports_location()
    not_written = ""
    try:
        csv_path, xlsx_path = write_rejects_report(report, out_dir)
    except OSError as exc:
        # The file was checked: its figures are printed, and the report can be written later.
        command = f"payflow validate {shlex.quote(str(file))} --out DIR"
        not_written = report_not_written(out_dir, why_not_written(exc), command)
    if sandbox:
        print(NO_REAL_MONEY, file=sys.stderr)
    if as_json:
        error = {"report_error": not_written} if not_written else {}
        print(json.dumps({**report.as_json(), "sandbox": sandbox, **error}, ensure_ascii=False))
    else:
        for line in summary_lines(report):
            print(line)
        if not not_written:
            print(f"report: {printable(str(csv_path))} and {printable(place_name(xlsx_path))}")
    if not_written:
        print(not_written, file=sys.stderr if as_json else sys.stdout)
    raise typer.Exit(EXIT_REJECTS if report.rejects or not_written else EXIT_VALID)
