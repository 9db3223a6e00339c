"""`payflow refund FILE`: check every row and order, confirm, refund each once, track, report."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from payflow.api.errors import PaymentsApiError
from payflow.cli.app import app, fail
from payflow.cli.ledger_checks import check_ledger, not_refunded_lines
from payflow.cli.question import ask, signal_exit_code
from payflow.cli.setup import prepare, readable_file, writable_folder
from payflow.intake import BatchFileError
from payflow.paying import InsufficientBalanceError
from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.redact import printable
from payflow.runtime import NO_REAL_MONEY, NO_REAL_MONEY_MOVED, api_endpoint, open_ledger
from payflow.schemas.iso4217 import amount_text
from payflow.settings import Settings
from payflow.stopping import STOP, RunInterrupted, run_until_done, stop_on_signals
from payflow.webhooks import WebhookReceiver
from payflow.wording import RUN_AGAIN_TO_RESUME, api_trouble, counted

if TYPE_CHECKING:
    from payflow.acts.actor import Actor
    from payflow.flows.approval import ApprovalNeeded
    from payflow.flows.refund_batch import RefundBatchResult
    from payflow.refunds.intake import RefundFile
    from payflow.runtime import ApiEndpoint

SHOWN_ROWS = 10


def _read(path: Path, sheet: str | None) -> RefundFile:
    """The refund file; a file refused for its content ends the command here, before Prefect or
    the sandbox start (the flow reads it again: it also runs without this command)."""
    from payflow.refunds.intake import read_refund_file

    try:
        return read_refund_file(path, sheet)
    except BatchFileError as exc:
        fail(str(exc))


def _confirm(yes: bool, path: Path, rows: int) -> None:
    """The operator's question before the orders are checked; a signal at it ends the command."""
    if yes:
        return
    if not sys.stdin.isatty():
        fail("confirmation needed: run again with --yes to refund without a prompt")
    # The orders' amounts are known only once the service is asked, after this question.
    question = (
        f"Refund every valid order of {path.name} ({counted(rows, 'row')}; each order is checked "
        "with the service first, and the balance must cover them)?"
    )
    with stop_on_signals():
        confirmed = ask(question)
    if STOP.requested():
        # Nothing is registered before the question: the flow reads the file once confirmed.
        fail(
            f"stopped on {STOP.signal_name} before refunding; nothing was sent. Resume with: "
            f"payflow refund {path} --yes",
            signal_exit_code(),
        )
    if not confirmed:
        fail("not confirmed; nothing was refunded", exit_code=1)


@app.command("refund")
def refund_command(
    file: Annotated[
        Path, typer.Argument(help="Refund file: CSV or XLSX (orderId, ...).", readable=False)
    ],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the report.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Refund without asking.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
    sheet: Annotated[str | None, typer.Option("--sheet", help="XLSX sheet to read.")] = None,
) -> None:
    """Refund every valid row of a file exactly once, follow each to its end, report.

    Over the approval policy's limits nothing is refunded: a checker approves the batch with
    `payflow approve BATCH`, then this command with the same file sends it."""
    settings = prepare()
    readable_file(file)
    writable_folder(out)
    refund_file = _read(file, sheet)
    check_ledger(settings)
    from payflow.cli.past_sandbox import refuse_refunds_left_behind  # reporting's imports

    refuse_refunds_left_behind(settings, refund_file.batch_id)
    maker = refund_maker(settings)  # before the question: one not signed in is told at once
    _confirm(yes, file, len(refund_file.frame))
    prefect = TemporaryPrefect.for_settings(settings)  # boots while Prefect is imported below
    # Imported here: Prefect and pandera cost seconds that the other commands need not pay.
    from payflow.acts.context import acting_as
    from payflow.cli.run import stopped
    from payflow.flows.approval import ApprovalNeeded, BatchStopped
    from payflow.flows.refund_batch import refund_batch
    from payflow.refunds.checks import OrderCheckError

    def refund(callback_url: str | None, endpoint: ApiEndpoint) -> RefundBatchResult:
        # In the run's own thread: the flow records the batch's terms as this maker's.
        with acting_as(maker):
            return refund_batch(
                path=str(file),
                out_dir=str(out) if out else None,
                sheet=sheet,
                api_url=endpoint.base_url,
                sandbox=endpoint.is_sandbox,
                callback_url=callback_url,
                maker=maker.name,
            )

    try:
        with ExitStack() as stack:
            # SIGTERM/SIGINT stop sending and let requests in flight settle in the ledger; the
            # run then ends with how to resume (it was killed mid-request, saying nothing).
            stack.enter_context(stop_on_signals())
            endpoint = stack.enter_context(api_endpoint(settings))
            if endpoint.is_sandbox:
                print(NO_REAL_MONEY, file=sys.stderr)
            callback_url = settings.webhook_url
            if callback_url is None and endpoint.is_sandbox:
                receiver = WebhookReceiver(settings.ledger_url_or_default(), endpoint.token)
                callback_url = stack.enter_context(receiver).url
            prefect.ready()
            result = run_until_done(prefect.calling(lambda: refund(callback_url, endpoint)))
    except ApprovalNeeded as exc:
        _waiting(settings, exc, file, as_json=as_json)
    except RunInterrupted as exc:
        stopped(settings, exc.batch_id, exc, f"payflow refund {file} --yes")
    except (BatchFileError, OrderCheckError, PrefectServerNotStarted) as exc:
        fail(str(exc))
    except (BatchStopped, InsufficientBalanceError) as exc:
        fail(str(exc))
    except PaymentsApiError as exc:
        fail(api_trouble(exc, then=RUN_AGAIN_TO_RESUME, sandbox=settings.uses_sandbox))
    _print(result, settings, as_json=as_json)
    # A report not written (a full disk) is exit 1, never 2: the refunds moved.
    raise typer.Exit(0 if result.all_completed and not result.report_error else 1)


def _print(result: RefundBatchResult, settings: Settings, *, as_json: bool) -> None:
    if as_json:
        summary = {
            "batch_id": result.batch_id,
            "rows": result.rows,
            "rejected": result.rejected,
            "already_known": result.already_known,
            "statuses": result.statuses,
            "notices": result.notices,
            "report": result.report_xlsx or None,
            "sandbox": result.sandbox,
            **({"report_error": result.report_error} if result.report_error else {}),
        }
        print(json.dumps(summary))
        return
    rows = counted(result.rows, "row")
    print(f"refund batch {result.batch_id}: {rows}, {result.rejected} rejected")
    for notice in result.notices:
        print(f"  warning: {notice}")
    for state, count in sorted(result.statuses.items()):
        print(f"  {state:<16} {count}")
    for line in not_refunded_lines(settings, result.batch_id):
        print(line)
    if result.already_known:
        # Known rows may still have been sent by this run (one stopped for the balance): true
        # either way, "not refunded again" was not.
        known = counted(result.already_known, "row")
        print(f"  {known} in the ledger from an earlier run: none is refunded twice")
    if result.pending:
        more = len(result.pending) - SHOWN_ROWS
        shown = ", ".join(result.pending[:SHOWN_ROWS]) + (f" and {more} more" if more > 0 else "")
        print(f"  not final at the deadline: {shown}")
    if result.report_error:
        print(result.report_error)
    else:
        print(f"report: {result.report_xlsx}")
        print(f"        {result.report_csv}")
    if result.sandbox:
        print(NO_REAL_MONEY_MOVED)


def refund_maker(settings: Settings) -> Actor:
    """Who registers the refunds: the signed-in maker, whom the two-person rule keeps from
    approving them (the embedded sandbox alone takes PAYFLOW_USER, where no money moves)."""
    from payflow.cli.signin import acting

    with open_ledger(settings) as ledger:
        return acting(settings, ledger, "maker", "registers refunds", binds_sandbox=True)


def _waiting(settings: Settings, exc: ApprovalNeeded, file: Path, *, as_json: bool) -> NoReturn:
    """The refunds are registered and over the policy's limits: their totals, the rules, who
    acts next; nothing was refunded (exit 1, as a payout batch waiting for approval)."""
    from payflow.approvals import approval_requirement
    from payflow.ledger.counts import rows_by_currency, sums_by_currency

    with open_ledger(settings) as ledger:
        requirement = approval_requirement(ledger, exc.batch_id)
        counts = ledger.refunds.summary(exc.batch_id)
    sums, rows = sums_by_currency(requirement.to_send), rows_by_currency(requirement.to_send)
    if as_json:
        summary = {
            "batch_id": exc.batch_id,
            "waiting_for_approvals": exc.steps_left,
            "statuses": counts,
            "to_refund": {c: amount_text(a, c) for c, a in sorted(sums.items())},
            "sandbox": settings.uses_sandbox,
        }
        print(json.dumps(summary))
    else:
        print(f"refund batch {exc.batch_id}: {counted(sum(counts.values()), 'row')} registered")
        for currency, amount in sorted(sums.items()):
            refunds = counted(rows[currency], "refund")
            print(f"  to refund: {refunds}, {amount_text(amount, currency)} {currency}")
        for rule in requirement.rules:
            print(printable(f"  rule: {rule}"))
        for warning in (*requirement.large_rows, *requirement.warnings):
            print(printable(f"  warning: {warning.text}"))
        for line in not_refunded_lines(settings, exc.batch_id):  # rejected before sending
            print(line)
    print(
        f"payflow: nothing was refunded: batch {exc.batch_id} is waiting for approval by "
        f"{counted(exc.steps_left, 'person')}, never its maker: `payflow approve "
        f"{exc.batch_id}`; then `payflow refund {file} --yes` again sends it",
        file=sys.stderr,
    )
    raise typer.Exit(1)
