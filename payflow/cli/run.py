"""`payflow run FILE`: register the file as a batch (the operator is its maker), confirm its totals
from the ledger, then pay exactly that batch id once the approval policy says so (the file is
never read again), track, report. The paying half is shared with `payflow pay BATCH_ID`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn
from urllib.parse import urlsplit

import typer

from payflow.acts.pay import COMMAND_LINE, start_paying
from payflow.api.errors import PaymentsApiError
from payflow.approvals import (
    Pending,
    PolicyError,
    UnknownBatch,
    Void,
    approval_requirement,
    approval_status,
)
from payflow.cli.app import app, fail
from payflow.cli.ledger_checks import (
    allow_repeats,
    api_failure,
    check_ledger,
    conflict_lines,
    held_lines,
    not_paid_lines,
    not_sent_lines,
)
from payflow.cli.past_sandbox import as_the_ledger_holds_it, resume_hint
from payflow.cli.progress import LedgerProgress
from payflow.cli.question import (
    EXIT_ON_SIGNAL,
    ask,
    piped_answer,
    piped_line,
    signal_exit_code,
)
from payflow.cli.setup import prepare, readable_file, writable_folder
from payflow.cli.signin import acting
from payflow.intake import BatchFileError
from payflow.ledger import BatchCounts, RowState
from payflow.paying import InsufficientBalanceError
from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.redact import printable
from payflow.run_results import IntakeResult, PayResult
from payflow.runtime import (
    NO_REAL_MONEY,
    NO_REAL_MONEY_MOVED,
    ApiEndpoint,
    ConfigurationError,
    api_endpoint,
    holds_api_token,
    open_ledger,
)
from payflow.schemas.iso4217 import amount_text
from payflow.settings import Settings
from payflow.stopping import (
    STOP,
    RunInterrupted,
    StoppedByOperator,
    run_until_done,
    stop_on_signals,
)
from payflow.webhooks import WEBHOOK_PATH, WebhookReceiver
from payflow.wording import counted, plural, state_words

if TYPE_CHECKING:
    from payflow.acts.actor import Actor
    from payflow.flows.approval import ApprovalNeeded

EXIT_ALL_COMPLETED, EXIT_NOT_ALL_COMPLETED = 0, 1
SHOWN_ROWS = 10


def totals_lines(counts: BatchCounts, latest: Mapping[str, int] | None = None) -> list[str]:
    """What the ledger says about the batch: already paid, pending, new, and the new totals;
    paid, failed and pending by each row's `latest` attempt when given."""
    # Held and conflicting rows are named when there are any, so the figures add up to the
    # rows; a CONFLICT row passed validation, so "rejected" alone contradicted "0 rejected".
    conflicts = counts.count(frozenset({RowState.CONFLICT}))
    rejected = counts.rejected - conflicts
    held = f", {counts.held} held" if counts.held else ""
    conflicting = f", {conflicts} refused as conflicts" if conflicts else ""
    # A file run again after a rerun paid its FAILED row read "1 failed, 0 already paid".
    by_latest = BatchCounts(counts.batch_id, latest) if latest else counts
    # A rerun's attempt not sent yet (waiting for approval) is pending for the row.
    pending = by_latest.pending + by_latest.new + by_latest.held - counts.new - counts.held
    lines = [
        f"in the ledger: {counted(counts.rows, 'row')}: {by_latest.completed} already paid, "
        f"{by_latest.not_paid} failed, {rejected} rejected{conflicting}, {pending} pending, "
        f"{counts.new} new{held}"
    ]
    if counts.to_pay:
        lines.append("to pay:")
    for total in counts.to_pay:
        lines.append(
            f"  {total.currency:<4} {total.payment_type:<13} "
            f"{total.rows:>7} {plural(total.rows, 'row'):<4}  "
            f"{amount_text(total.amount, total.currency):>18}"
        )
    return lines


def _confirm(
    settings: Settings, yes: bool, counts: BatchCounts, say: Callable[[str], None]
) -> bool:
    """The maker's question; a signal while it waits returns with `STOP` set (the caller stops
    the run as before paying). True when it showed the approval the batch will wait for."""
    if yes or not counts.to_send:
        return False
    # `echo y | payflow run FILE` worked 78 s, then said it needed --yes: a piped line answers.
    piped = None if sys.stdin.isatty() else piped_line()
    if not sys.stdin.isatty() and piped is None:
        fail("confirmation needed: run again with --yes to pay without a prompt")
    # The maker confirmed "Pay 1 new row?" and only then read that the batch waits for a
    # second person, and why (a row paying a recipient paid another amount an hour ago).
    steps = _approval_steps_left(settings, counts.batch_id)
    if steps:
        say(
            f"once submitted, batch {counts.batch_id} waits for approval by "
            f"{counted(steps, 'person')} before anything is sent:"
        )
        for line in approval_lines(settings, counts.batch_id):
            say(line)
    question = ("Submit {} for approval?" if steps else "Pay {}?").format(
        counted(counts.to_send, "new row")
    )
    confirmed = ask(question) if piped is None else piped_answer(question, piped)
    if not confirmed and not STOP.requested():
        fail("not confirmed; nothing was paid", exit_code=EXIT_NOT_ALL_COMPLETED)
    return bool(steps)


def _approval_steps_left(settings: Settings, batch_id: str) -> int:
    """Approvals the batch still needs before its first payout (0 when the policy lets it go)."""
    with open_ledger(settings) as ledger:
        status = approval_status(ledger, batch_id)
    return status.steps_left if isinstance(status, Pending | Void) else 0


def submit_as_maker(settings: Settings, batch_id: str, maker: Actor) -> None:
    """Record the batch's terms with the signed-in maker (the act); a batch another maker
    submitted before is only paid by this run, under that maker's terms."""
    from payflow.acts import NotAllowed, submit
    from payflow.approvals.store import terms_of

    with open_ledger(settings) as ledger:
        terms = terms_of(ledger, batch_id)
        if terms is not None and terms.maker is not None:
            return
        try:
            submit(ledger, batch_id, maker)
        except NotAllowed as exc:
            fail(f"{exc}; nothing was paid")


def _stop_before_paying(batch_id: str, resume: str) -> None:
    """A signal came before the first payout (checking the file, or at the question): the
    batch is registered, nothing was sent; the same exit and resume line as a stop while
    paying (it was exit 2, the code of bad input)."""
    if STOP.requested():
        fail(
            f"stopped on {STOP.signal_name} before paying; nothing was sent; batch "
            f"{batch_id} is in the ledger. Resume with: {resume}",
            signal_exit_code(),
        )


@contextmanager
def paying_endpoint(settings: Settings) -> Iterator[tuple[ApiEndpoint, str | None]]:
    """The API (or the embedded sandbox, with a webhook receiver on this machine) and the
    callbackUrl to send; SIGTERM/SIGINT stop the run cleanly while inside. The caller says
    when the sandbox serves (`say_sandbox`), once it is about to pay."""
    with ExitStack() as stack:
        stack.enter_context(stop_on_signals())
        endpoint = stack.enter_context(api_endpoint(settings))
        callback_url = settings.webhook_url
        if callback_url is not None and not _receiver_path(callback_url):
            print(
                f"payflow: PAYFLOW_WEBHOOK_URL does not end in {WEBHOOK_PATH}, the receiver's "
                "path: webhooks may never arrive (polling still finishes the batch)",
                file=sys.stderr,
            )
        if callback_url is None and endpoint.is_sandbox:
            # The embedded sandbox can reach a receiver on this machine: show the whole loop.
            receiver = WebhookReceiver(settings.ledger_url_or_default(), endpoint.token)
            callback_url = stack.enter_context(receiver).url
        yield endpoint, callback_url


@contextmanager
def _paying_or_registering(
    settings: Settings, registering_only: bool
) -> Iterator[tuple[ApiEndpoint | None, str | None]]:
    """`paying_endpoint`, or (a process without the API token, which only registers) no
    endpoint, with SIGTERM/SIGINT stopping the run cleanly all the same."""
    if not registering_only:
        with paying_endpoint(settings) as found:
            yield found
        return
    with stop_on_signals():
        yield None, None


def registered_only(settings: Settings, counts: BatchCounts, *, as_json: bool) -> NoReturn:
    """A process without the API token registered and submitted the batch: say that nothing
    was sent and who acts next (the checkers, then the paying side), exit 1."""
    batch_id = counts.batch_id
    steps = _approval_steps_left(settings, batch_id) if counts.to_send else 0
    if as_json:
        print(
            json.dumps(
                {
                    "batch_id": batch_id,
                    "registered": True,
                    "waiting_for_approvals": steps,
                    "sandbox": False,
                }
            )
        )
    approval = (
        f"it waits for approval by {counted(steps, 'person')} (payflow approve {batch_id}); then "
        if steps
        else ""
    )
    print(
        f"payflow: batch {batch_id} is registered and nothing was sent: this process holds no "
        f"PAYFLOW_API_TOKEN; {approval}the paying side pays it (payflow pay {batch_id})",
        file=sys.stderr,
    )
    for line in approval_lines(settings, batch_id) if steps else []:
        print(line, file=sys.stderr)
    raise typer.Exit(EXIT_NOT_ALL_COMPLETED)


def say_sandbox(endpoint: ApiEndpoint) -> None:
    """Tell the operator, before anything is sent, that the embedded sandbox serves."""
    if endpoint.is_sandbox:
        print(NO_REAL_MONEY, file=sys.stderr)


def _receiver_path(url: str) -> bool:
    """Whether the URL ends in the receiver's own path (every delivery to another path fails;
    a proxy that rewrites paths is the one case this misjudges, and it only prints a line)."""
    return urlsplit(url).path.rstrip("/").endswith(WEBHOOK_PATH)


def pay_in_process(
    settings: Settings,
    batch_id: str,
    rows: int,
    endpoint: ApiEndpoint,
    callback_url: str | None,
    *,
    out_dir: str | None,
    live: bool,
    payer: Actor,
    prefect: TemporaryPrefect,
) -> PayResult:
    """Run the pay flow for a batch in the ledger, here and now, as `payer`'s act (recorded,
    with the run's end, when the batch may pay). It never waits for approval: a batch the
    policy holds for approval raises `ApprovalNeeded`."""
    from payflow.flows.pay_batch import pay_batch, pay_result

    with open_ledger(settings) as ledger:
        started = start_paying(ledger, batch_id, payer, where=COMMAND_LINE)

    def pay() -> PayResult:
        return pay_result(
            pay_batch(
                batch_id,
                out_dir=out_dir,
                api_url=endpoint.base_url,
                sandbox=endpoint.is_sandbox,
                callback_url=callback_url,
                wait_for_approval=False,
                # The embedded sandbox stops when this command's block ends.
                sandbox_ends_with_run=endpoint.is_sandbox,
                started_by=payer.name if started else None,
                return_state=True,
            )
        )

    progress = LedgerProgress(settings.ledger_url_or_default(), batch_id, rows, live=live)
    with progress:
        result = run_until_done(prefect.calling(pay))
    return result


def finish(
    settings: Settings,
    result: PayResult,
    *,
    as_json: bool,
    again: str = "run again with --allow-repeat",
) -> NoReturn:
    """Print the result read from the ledger, the held rows (and `again`: how to pay them),
    and exit 0 only if all paid."""
    say = (lambda line: print(line, file=sys.stderr)) if as_json else print
    not_sent, unsent_ids = not_sent_lines(settings, result.batch_id)
    not_paid = not_paid_lines(settings, result.batch_id) if result.has_not_paid() else []
    not_paid = [*not_sent, *not_paid]
    # Rows the service refused at every try were never sent: listed apart, not as pending.
    pending = [ext for ext in result.pending if ext not in unsent_ids]
    conflicts = (
        conflict_lines(settings, result.batch_id) if result.counts.by_state.get("CONFLICT") else []
    )
    _print_result(replace(result, pending=pending), not_paid, as_json=as_json, conflicts=conflicts)
    for line in not_paid if as_json else []:
        say(line)
    for line in held_lines(settings, result.batch_id, again):
        say(line)
    # A row is paid or not by its latest attempt: a rerun (of this batch or of another holding
    # the row) paid a FAILED row, and the run read "FAILED 1", exit 1, with nothing unpaid listed.
    # A report not written (a full disk) is exit 1 too, never 2: the money moved.
    ok = result.all_completed and not result.report_error
    raise typer.Exit(EXIT_ALL_COMPLETED if ok else EXIT_NOT_ALL_COMPLETED)


def approval_lines(settings: Settings, batch_id: str) -> list[str]:
    """The rules and warnings an approver of the batch will see, read from the ledger."""
    with open_ledger(settings) as ledger:
        requirement = approval_requirement(ledger, batch_id)
    return [
        *(f"  rule: {rule}" for rule in requirement.rules),
        *(
            printable(f"  warning: {warning.text}")
            for warning in (*requirement.large_rows, *requirement.warnings)
        ),
    ]


def waiting(
    settings: Settings, exc: ApprovalNeeded, *, as_json: bool, shown: bool = False
) -> NoReturn:
    """The batch is registered but needs approvals: say who must act and why (the rules and
    warnings, unless the maker's question just `shown` them), exit 1."""
    if as_json:
        waits = {"batch_id": exc.batch_id, "waiting_for_approvals": exc.steps_left}
        print(json.dumps({**waits, "sandbox": settings.uses_sandbox}))
    print(f"payflow: {exc}", file=sys.stderr)
    for line in [] if shown else approval_lines(settings, exc.batch_id):
        print(line, file=sys.stderr)
    raise typer.Exit(EXIT_NOT_ALL_COMPLETED)


def stopped(settings: Settings, batch_id: str | None, exc: Exception, resume: str) -> NoReturn:
    """One line (or the resume hint after a signal) for what stopped a pay run, and its exit."""
    if isinstance(exc, RunInterrupted):
        print(
            f"payflow: stopped on {exc.signal_name}: nothing more is sent; every row of batch "
            f"{exc.batch_id} is in the ledger. {resume_hint(settings, exc.batch_id, resume)}",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_ON_SIGNAL.get(exc.signal_name, 143))
    if isinstance(exc, ConfigurationError):
        fail(f"configuration: {exc}")
    if isinstance(exc, PaymentsApiError):
        fail(api_failure(settings, batch_id, exc))
    fail(str(exc))


PAY_STOPS = (
    RunInterrupted,
    StoppedByOperator,
    ConfigurationError,
    PaymentsApiError,
    InsufficientBalanceError,
    UnknownBatch,
    PolicyError,
)


@app.command("run")
def run_command(
    file: Annotated[
        Path, typer.Argument(help="The batch: CSV (comma or semicolon) or XLSX.", readable=False)
    ],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the report.")] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Submit (and pay) without asking for confirmation.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
    sheet: Annotated[str | None, typer.Option("--sheet", help="XLSX sheet to read.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings as rejects.")] = False,
    allow_repeat: Annotated[
        bool,
        typer.Option(
            "--allow-repeat",
            help="Pay rows held because the same person (requisites, userId or name) was paid "
            "the same amount and currency by another payout in the last 30 days (then a second "
            "person approves).",
        ),
    ] = False,
) -> None:
    """Register a batch as its maker, pay it once approved (a batch under every approval limit
    pays at once), follow every payout to a final status, report."""
    settings = prepare()
    readable_file(file)
    writable_folder(out)
    prefect = TemporaryPrefect.for_settings(settings)  # boots while the lines below import and open
    # Imported here: loading Prefect costs seconds that the other commands need not pay.
    from payflow.connections import binding_checked_here
    from payflow.flows.approval import ApprovalNeeded, BatchStopped
    from payflow.flows.intake_batch import intake_batch

    say = (lambda line: print(line, file=sys.stderr)) if as_json else print
    out_dir = str(out) if out else None
    batch_id: str | None = None
    approval_shown = False
    resume = f"payflow run {file} --yes"
    with open_ledger(settings) as ledger:
        maker = acting(settings, ledger, "maker", "registers a batch", binds_sandbox=True)
    try:
        check_ledger(settings)
        # Checked once here, before Prefect is waited for: the intake and pay flows run below
        # in this process take it as checked (each asked GET /v1/merchants/balance again).
        # A maker's process without the API token registers and submits; the paying side pays.
        registering_only = settings.api_url is not None and not holds_api_token(settings)
        with (
            binding_checked_here(settings, settings.uses_sandbox),
            _paying_or_registering(settings, registering_only) as (endpoint, callback_url),
        ):
            prefect.ready()
            intake: IntakeResult = run_until_done(
                prefect.calling(
                    lambda: intake_batch(
                        str(file),
                        sheet=sheet,
                        strict=strict,
                        out_dir=out_dir,
                        api_url=endpoint.base_url if endpoint else settings.api_url,
                        sandbox=endpoint.is_sandbox if endpoint else False,
                        made_by=maker.name,
                    )
                )
            )
            batch_id = intake.batch_id
            submit_as_maker(settings, batch_id, maker)
            counts = allow_repeats(settings, batch_id, maker) if allow_repeat else intake.counts
            # The file run again on a new embedded sandbox: what the ledger holds, or a stop.
            held = (
                as_the_ledger_holds_it(settings, batch_id, out) if settings.uses_sandbox else None
            )
            if counts.to_send and held is None and endpoint is not None:
                # Only now: a file refused, or with nothing to pay, moved no money of any kind,
                # and a line about money above its error read as if a run had started.
                say_sandbox(endpoint)
            with open_ledger(settings) as ledger:
                latest = ledger.latest_summary(batch_id)
            for line in [*intake.summary, *totals_lines(counts, latest)]:
                say(line)
            for line in held_lines(settings, batch_id):
                say(line)
            if held is not None:
                finish(settings, held, as_json=as_json)
            if endpoint is None:
                registered_only(settings, counts, as_json=as_json)
            _stop_before_paying(batch_id, resume)
            # The maker's confirmation submits the batch; it is not an approval. pay_batch asks
            # the approval policy, from the ledger, before the first payout.
            approval_shown = _confirm(settings, yes, counts, say)
            _stop_before_paying(batch_id, resume)
            live = sys.stderr.isatty() and not as_json
            result = pay_in_process(
                settings,
                batch_id,
                counts.rows,
                endpoint,
                callback_url,
                out_dir=out_dir,
                live=live,
                payer=maker,
                prefect=prefect,
            )
    except ApprovalNeeded as exc:
        waiting(settings, exc, as_json=as_json, shown=approval_shown)
    except (BatchFileError, PrefectServerNotStarted) as exc:
        fail(str(exc))
    except (*PAY_STOPS, BatchStopped) as exc:
        stopped(settings, batch_id, exc, resume)
    finish(settings, result, as_json=as_json)


def _print_result(
    result: PayResult, not_paid: list[str], *, as_json: bool, conflicts: Sequence[str] = ()
) -> None:
    """The run's figures, and by latest attempt when a rerun moved any row."""
    if as_json:
        print(json.dumps(result.as_json()))
        return
    counts = result.counts
    print(
        f"batch {result.batch_id}: {counted(counts.rows, 'row')}, "
        f"{counts.by_state.get('REJECTED', 0)} rejected, {result.submitted} submitted by this run"
    )
    for state, count in counts.statuses.items():
        print(f"  {state_words(state):<16} {count}")
    if result.rerun_moved:
        print("  rows by latest attempt (a rerun sent some again):")
        for state, count in result.by_latest.statuses.items():
            print(f"    {state_words(state):<16} {count}")
    if counts.by_state.get("CONFLICT"):
        known = counted(counts.by_state["CONFLICT"], "row")
        print(f"  {known} with a known externalId and other content:")
        for line in conflicts:
            print(line)
    if result.corrections:
        corrected = counted(result.corrections, "payout")
        print(f"  {corrected} corrected by the platform after completion")
    if result.pending:
        shown = ", ".join(result.pending[:SHOWN_ROWS])
        more = len(result.pending) - SHOWN_ROWS
        print(f"  still pending at the deadline: {shown}{f' and {more} more' if more > 0 else ''}")
        print(f"  follow them with `payflow status {result.batch_id}`")
    for line in not_paid:
        print(line)
    if rechecked := result.not_rechecked_line():
        print(rechecked)
    if result.report_error:
        print(result.report_error)
    else:
        print(f"report: {printable(result.report_xlsx)}")
        print(f"        {printable(result.report_csv)}")
    if result.sandbox:
        print(NO_REAL_MONEY_MOVED)
