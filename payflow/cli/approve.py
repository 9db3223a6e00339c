"""`payflow approve BATCH_ID`: record an approval (or a decline) and resume the paused run."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated

import typer

from payflow.approvals import (
    ApprovalRefused,
    ApprovalStatus,
    Approved,
    Declined,
    Pending,
    PolicyError,
    Requirement,
    UnknownBatch,
    Void,
    WarningsUnacknowledged,
    approval_requirement,
)
from payflow.approvals.decide import DecisionOutcome, decide
from payflow.cli.app import app, fail
from payflow.cli.batch_kinds import BatchKind, batch_kind
from payflow.cli.setup import prepare
from payflow.cli.signin import acting
from payflow.ledger import CurrencyTotal
from payflow.ledger.counts import rows_by_currency, sums_by_currency
from payflow.ledger.service_binding import sandbox_served
from payflow.redact import printable
from payflow.runtime import NO_REAL_MONEY_MOVED, open_ledger
from payflow.schemas.iso4217 import amount_text
from payflow.wording import counted, plural

if TYPE_CHECKING:
    from payflow.acts.actor import Actor
    from payflow.approvals.resume import Replaced
    from payflow.ledger import Ledger


def replaced_line(replaced: Replaced) -> str:
    """What became of a paused run whose process had stopped, in one line."""
    line = (
        f"paused flow run {replaced.stalled} did not go on: its process had stopped (a worker "
        f"restart?); run {replaced.dead} is marked crashed"
    )
    if replaced.started:
        return f"{line}; started flow run {replaced.started} of its deployment to pay the batch"
    return line


@app.command("approve")
def approve_command(
    batch_id: Annotated[str, typer.Argument(help="The batch waiting for approval.")],
    decline: Annotated[bool, typer.Option("--decline", help="Decline instead of approve.")] = False,
    note: Annotated[str | None, typer.Option("--note", help="Why, kept with the record.")] = None,
    acknowledge: Annotated[
        bool,
        typer.Option("--acknowledge-warnings", help="Approve although the batch has warnings."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
    code: Annotated[
        bool,
        typer.Option(
            "--code",
            help="Record nothing: print a one-time code to answer Prefect's pause form with.",
        ),
    ] = False,
) -> None:
    """Approve or decline a batch (payouts, refunds or links) as the signed-in checker
    (`payflow login`); the maker cannot approve their own batch."""
    settings = prepare()
    with open_ledger(settings) as ledger:
        kind = batch_kind(ledger, batch_id)
        if kind is None:
            fail(f"no batch {batch_id!r} in the ledger {settings.ledger_place}")
        checker = acting(settings, ledger, "checker", "approves or declines a batch")
        if code:
            _print_code(ledger, batch_id, checker)
        try:
            # What the checker reads and acknowledges, as the decision weighs it: read after it,
            # a paused run the decision resumed had often paid the row above the per-row maximum
            # already, and its acknowledged warning was missing from what the checker was told.
            requirement = approval_requirement(ledger, batch_id)
            outcome = decide(
                checker,
                ledger,
                batch_id,
                settings,
                decline=decline,
                note=note,
                acknowledge_warnings=acknowledge,
            )
        except WarningsUnacknowledged as exc:
            # The line named no way to acknowledge them: the flag is the command line's own.
            print(
                f"payflow: {exc}; nothing was recorded: once read, approve with "
                "--acknowledge-warnings",
                file=sys.stderr,
            )
            # With the notes of how the file was read, as the console's approve page and the
            # pause form show them: a checker reads them before acknowledging the warnings.
            for line in note_lines(requirement):
                print(printable(line), file=sys.stderr)
            raise typer.Exit(2) from None
        except (ApprovalRefused, PolicyError, UnknownBatch) as exc:
            fail(f"{exc}; nothing was recorded" if isinstance(exc, ApprovalRefused) else str(exc))
        # Read after the decision: what the approver approved (or declined) is the batch as the
        # ledger holds it, the figures its approval record is bound to.
        # A refund or links batch's rows are refunds and links, not payouts.
        totals = (*ledger.batch_totals(batch_id), *outflow_totals(ledger, batch_id))
        source = batch_source(ledger, batch_id)
        sandbox = sandbox_served(ledger)
    status = type(outcome.status).__name__
    if as_json:
        summary = {
            "batch_id": batch_id,
            "approver": outcome.approver,
            "decision": "decline" if decline else "approve",
            "status": status,
            "totals": {
                currency: {"rows": rows, "amount": amount_text(amount, currency)}
                for currency, rows, amount in _per_currency(totals)
            },
            "warnings": [w.text for w in (*requirement.large_rows, *requirement.warnings)],
            "notes": list(requirement.notes),
            "resumed": outcome.resumed,
            "replaced": [
                {"stalled": r.stalled, "crashed": r.dead, "started": r.started}
                for r in outcome.replaced
            ],
            "going_on": outcome.going_on,
            "sandbox": sandbox,
        }
        typer.echo(json.dumps(summary))
    else:
        seen = [printable(line) for line in warning_lines(requirement, decline)]
        for line in decision_lines(batch_id, outcome, decline, totals, seen, kind, source):
            typer.echo(line)
        if sandbox:  # the totals read as money to be paid: the sandbox pays none
            typer.echo(NO_REAL_MONEY_MOVED)
    raise typer.Exit(0)


def decision_lines(
    batch_id: str,
    outcome: DecisionOutcome,
    decline: bool,
    totals: Sequence[CurrencyTotal],
    seen: Sequence[str] = (),
    kind: BatchKind = "payout",
    source: str = "FILE",
) -> list[str]:
    """What `payflow approve` did, on what (`totals`: the batch's payouts as the ledger holds
    them), and what happens next, in payflow's words only: the pause form's text (answer with
    `approve`, `approver`...) is for Prefect's resume form, and read here it asked the operator
    to answer again what they had just answered."""
    status = outcome.status
    lines = [
        f"{'declined' if decline else 'approved'} by {outcome.approver}; "
        f"batch {batch_id} is now {type(status).__name__}"
    ]
    # An approver sees what they approved: the form that showed the totals is Prefect's.
    noun = KIND_NOUN[kind]
    lines += [
        f"  {currency:<4} {rows:>7} {plural(rows, noun):<7}  {amount_text(sum_, currency):>18}"
        for currency, rows, sum_ in _per_currency(totals)
    ]
    lines += seen  # the warnings and intake notes, before what comes next
    lines += [f"resumed paused flow run {run_id}: {_goes_on(status)}" for run_id in outcome.resumed]
    lines += [replaced_line(replaced) for replaced in outcome.replaced]
    if outcome.resume_problem:
        lines.append(f"no run resumed: {outcome.resume_problem}")
    if isinstance(status, Pending | Void):
        # The paused run (if any) waits on: it is resumed once the last step is given.
        more = counted(status.steps_left, "more approval step")
        lines.append(f"waiting for {more}, each by another person: payflow approve {batch_id}")
    started = [r for r in outcome.replaced if r.started]
    if outcome.going_on:
        lines.append(outcome.going_on)  # its run died: resumed here, or when the watchdog will
    elif isinstance(status, Approved) and not outcome.resumed and not started:
        # `payflow run` ends while it waits for approval: nothing pays until someone asks.
        lines.append(NEXT_WHEN_APPROVED[kind].format(batch=batch_id, source=source))
    if isinstance(status, Declined):
        lines.append(f"nothing of batch {batch_id} will be paid")
    return lines


KIND_NOUN: dict[BatchKind, str] = {"payout": "payout", "refund": "refund", "links": "link"}
# What sends an approved batch that no paused run waits for, by its kind.
NEXT_WHEN_APPROVED: dict[BatchKind, str] = {
    "payout": "nothing is paying it yet: pay it with `payflow pay {batch}`",
    "refund": "nothing is refunded yet: `payflow refund {source} --yes` (its file) sends it",
    "links": (
        "no claim URL is written yet: `payflow links --reissue {batch}` writes them (or "
        "`payflow links {source}` again)"
    ),
}


def outflow_totals(ledger: Ledger, batch_id: str) -> tuple[CurrencyTotal, ...]:
    """A refund or links batch's rows per currency, in any state (none for a payout batch)."""
    from payflow.ledger.db import reader
    from payflow.ledger.outflow import unsent_outflow

    return unsent_outflow(reader(ledger.engine), batch_id, every=True)


def batch_source(ledger: Ledger, batch_id: str) -> str:
    """The file name the batch was registered from, as the next step names it."""
    header = ledger.batch_header(batch_id)
    return header.source_name if header is not None else "FILE"


def warning_lines(requirement: Requirement, decline: bool) -> list[str]:
    """The warnings (and rows above the per-row maximum) the decision saw, and the notes the
    maker read at intake: a checker reads every one, whatever surface they approve on."""
    said = "warning" if decline else "warning acknowledged"
    lines = [f"  {said}: {w.text}" for w in (*requirement.large_rows, *requirement.warnings)]
    return lines + note_lines(requirement)


def note_lines(requirement: Requirement) -> list[str]:
    """The notes of how the batch's file was read, as the maker read them at intake."""
    return [f"  note from intake: {note}" for note in requirement.notes]


def _per_currency(totals: Sequence[CurrencyTotal]) -> list[tuple[str, int, Decimal]]:
    """(currency, payouts, amount) per currency, whatever the destination."""
    rows, sums = rows_by_currency(totals), sums_by_currency(totals)
    return [(currency, rows[currency], sums[currency]) for currency in sorted(sums)]


def _goes_on(status: ApprovalStatus) -> str:
    """What a resumed pay run does with the batch's status."""
    return "it pays the batch now" if isinstance(status, Approved) else "it ends, paying nothing"


def _print_code(ledger: Ledger, batch_id: str, checker: Actor) -> None:
    """Print a one-time approval code for Prefect's pause form, and exit 0."""
    from payflow.acts.auth import CODE_MINUTES, issue_code

    if checker.via == "sandbox-user":
        fail("an approval code needs a sign-in: payflow login NAME")
    given = issue_code(ledger, batch_id, checker)
    typer.echo(given)
    print(
        f"one-time approval code for batch {batch_id}, for {checker.name}: type it in the pay "
        f"run's Prefect form within {CODE_MINUTES:g} minutes; it works once",
        file=sys.stderr,
    )
    raise typer.Exit(0)


@app.command("submit")
def submit_command(
    batch_id: Annotated[str, typer.Argument(help="A batch a deployed run registered.")],
) -> None:
    """Submit a batch as its maker (signed in): a batch a deployed run registered from a file of
    no operator's OS account waits for this before a checker may approve it."""
    from payflow.acts import NotAllowed, submit

    settings = prepare()
    with open_ledger(settings) as ledger:
        if batch_kind(ledger, batch_id) is None:
            fail(f"no batch {batch_id!r} in the ledger {settings.ledger_place}")
        maker = acting(settings, ledger, "maker", "submits a batch")
        try:
            terms = submit(ledger, batch_id, maker)
        except (NotAllowed, UnknownBatch) as exc:
            fail(f"{exc}; nothing was recorded")
    typer.echo(
        f"batch {batch_id} submitted by {terms.maker} under approval policy version "
        f"{terms.policy_version}: {counted(terms.steps, 'approval step')} needed"
    )
