"""`payflow run FILE`: validate, confirm the totals, pay each valid row once, track, report."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from contextlib import ExitStack
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from payflow.api.errors import AuthError, PaymentsApiError
from payflow.cli.app import app, fail
from payflow.cli.ledger_checks import api_failure, held_lines, prepare_ledger
from payflow.cli.progress import LedgerProgress
from payflow.cli.setup import prepare
from payflow.cli.validate import validate_with
from payflow.intake import BatchFileError, ValidationReport, read_batch_file
from payflow.intake.report_files import summary_lines
from payflow.model import display_amount
from payflow.paying import InsufficientBalanceError
from payflow.runtime import NO_REAL_MONEY, ConfigurationError, api_endpoint
from payflow.webhooks import WebhookReceiver

if TYPE_CHECKING:
    from flows.payout_batch import BatchResult

EXIT_ALL_COMPLETED, EXIT_NOT_ALL_COMPLETED = 0, 1
SHOWN_ROWS = 10


def totals_lines(report: ValidationReport) -> list[str]:
    """What the batch will pay, per currency and destination."""
    totals: dict[tuple[str, str], tuple[int, Decimal]] = defaultdict(lambda: (0, Decimal(0)))
    for row in report.instructions:
        count, amount = totals[(row.currency, row.payment_type)]
        totals[(row.currency, row.payment_type)] = (count + 1, amount + row.amount)
    lines = ["to pay:"]
    for (currency, payment_type), (count, amount) in sorted(totals.items()):
        lines.append(
            f"  {currency:<4} {payment_type:<13} {count:>7} rows  {display_amount(amount):>18}"
        )
    return lines


def _confirm(yes: bool, report: ValidationReport) -> None:
    if yes or not report.instructions:
        return
    if not sys.stdin.isatty():
        fail("confirmation needed: run again with --yes to pay without a prompt")
    if not typer.confirm(f"Pay {report.valid} rows?", default=False, err=True):
        fail("not confirmed; nothing was paid", exit_code=EXIT_NOT_ALL_COMPLETED)


@app.command("run")
def run_command(
    file: Annotated[Path, typer.Argument(help="The batch: CSV (comma or semicolon) or XLSX.")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the report.")] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Pay without asking for confirmation.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
    sheet: Annotated[str | None, typer.Option("--sheet", help="XLSX sheet to read.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings as rejects.")] = False,
    allow_repeat: Annotated[
        bool,
        typer.Option(
            "--allow-repeat",
            help="Pay rows held because the same recipient, amount and currency was paid "
            "in the last 30 days under another externalId.",
        ),
    ] = False,
) -> None:
    """Validate a batch, pay every valid row exactly once, follow it to a final status, report."""
    settings = prepare()
    # Imported here: loading Prefect costs seconds that the other commands need not pay.
    from flows.payout_batch import BatchStopped, payout_batch

    say = (lambda line: print(line, file=sys.stderr)) if as_json else print
    try:
        raw = read_batch_file(file, sheet)
        prepare_ledger(settings, raw.batch_id, allow_repeat=allow_repeat)
        with ExitStack() as stack:
            endpoint = stack.enter_context(api_endpoint(settings))
            if endpoint.is_sandbox:
                print(NO_REAL_MONEY, file=sys.stderr)
            callback_url = settings.webhook_url
            if callback_url is None and endpoint.is_sandbox:
                # The embedded sandbox can reach a receiver on this machine: show the whole loop.
                receiver = WebhookReceiver(settings.ledger_url_or_default(), endpoint.token)
                callback_url = stack.enter_context(receiver).url
            report = validate_with(endpoint, raw, settings=settings, strict=strict)
            for line in [*summary_lines(report), *totals_lines(report)]:
                say(line)
            _confirm(yes, report)
            progress = LedgerProgress(
                settings.ledger_url_or_default(),
                report.batch_id,
                report.rows,
                enabled=sys.stderr.isatty(),
            )
            with progress:
                result = payout_batch(
                    path=str(file),
                    approved=True,
                    out_dir=str(out) if out else None,
                    sheet=sheet,
                    strict=strict,
                    api_url=endpoint.base_url,
                    sandbox=endpoint.is_sandbox,
                    callback_url=callback_url,
                )
    except BatchFileError as exc:
        fail(str(exc))
    except ConfigurationError as exc:
        fail(f"configuration: {exc}")
    except AuthError:
        fail("the payments API refused the token (check PAYFLOW_API_TOKEN); nothing more was sent")
    except (BatchStopped, InsufficientBalanceError) as exc:
        fail(str(exc))
    except PaymentsApiError as exc:
        fail(api_failure(settings, raw.batch_id, exc))
    _print_result(result, as_json=as_json)
    for line in held_lines(settings, result.batch_id):
        say(line)
    raise typer.Exit(EXIT_ALL_COMPLETED if result.all_completed else EXIT_NOT_ALL_COMPLETED)


def _print_result(result: BatchResult, *, as_json: bool) -> None:
    if as_json:
        summary = {
            "batch_id": result.batch_id,
            "rows": result.rows,
            "rejected": result.rejected,
            "submitted": result.submitted,
            "statuses": result.statuses,
            "report": result.report_xlsx,
        }
        print(json.dumps(summary))
        return
    print(
        f"batch {result.batch_id}: {result.rows} rows, {result.rejected} rejected, "
        f"{result.submitted} submitted"
    )
    for state, count in sorted(result.statuses.items()):
        print(f"  {state:<16} {count}")
    if result.already_known:
        print(f"  {result.already_known} rows were already in the ledger: not paid again")
    if result.conflicts:
        print(f"  {result.conflicts} rows reuse a known externalId with other content: not paid")
    if result.corrections:
        print(f"  {result.corrections} payouts were corrected by the platform after completion")
    if result.pending:
        shown = ", ".join(result.pending[:SHOWN_ROWS])
        more = (
            f" and {len(result.pending) - SHOWN_ROWS} more"
            if len(result.pending) > SHOWN_ROWS
            else ""
        )
        print(f"  still pending at the deadline: {shown}{more}")
        print(f"  follow them with `payflow status {result.batch_id}`")
    if any(s in result.statuses for s in ("FAILED", "CANCELED", "EXPIRED", "SUBMIT_REJECTED")):
        print("  failed rows are never sent again automatically:")
        print("  read their statusMessage in the report before any rerun")
    print(f"report: {result.report_xlsx}")
    print(f"        {result.report_csv}")
    if result.sandbox:
        print("sandbox: no real money moved")
