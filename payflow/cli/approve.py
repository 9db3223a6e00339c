"""`payflow approve BATCH_ID`: record an approval (or a decline) and resume the paused run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from payflow.approvals import (
    ApprovalRefused,
    Approved,
    PolicyError,
    UnknownBatch,
    approval_form_markdown,
    approval_requirement,
    approval_status,
    load_policy,
)
from payflow.approvals.decide import decide
from payflow.cli.app import app, fail
from payflow.cli.setup import prepare
from payflow.runtime import open_ledger

if TYPE_CHECKING:
    from payflow.approvals.resume import Replaced


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
) -> None:
    """Approve or decline a batch as the OS user; the maker cannot approve their own batch."""
    settings = prepare()
    with open_ledger(settings) as ledger:
        try:
            policy = load_policy(settings.approvals_file)
            requirement = approval_requirement(ledger, batch_id, policy)
            form = approval_form_markdown(requirement, approval_status(ledger, batch_id, policy))
            outcome = decide(
                settings,
                ledger,
                batch_id,
                decline=decline,
                note=note,
                acknowledge_warnings=acknowledge,
            )
        except (ApprovalRefused, PolicyError, UnknownBatch) as exc:
            fail(f"{exc}; nothing was recorded" if isinstance(exc, ApprovalRefused) else str(exc))
    status = type(outcome.status).__name__
    if as_json:
        summary = {
            "batch_id": batch_id,
            "approver": outcome.approver,
            "decision": "decline" if decline else "approve",
            "status": status,
            "resumed": outcome.resumed,
            "replaced": [
                {"stalled": r.stalled, "crashed": r.dead, "started": r.started}
                for r in outcome.replaced
            ],
        }
        typer.echo(json.dumps(summary))
    else:
        typer.echo(form)
        typer.echo("")
        typer.echo(
            f"{'declined' if decline else 'approved'} by {outcome.approver}; "
            f"batch {batch_id} is now {status}"
        )
        for run_id in outcome.resumed:
            typer.echo(f"resumed paused flow run {run_id}")
        for replaced in outcome.replaced:
            typer.echo(replaced_line(replaced))
        if outcome.resume_problem:
            typer.echo(f"no run resumed: {outcome.resume_problem}")
        started = [r for r in outcome.replaced if r.started]
        if isinstance(outcome.status, Approved) and not outcome.resumed and not started:
            # `payflow run` ends while it waits for approval: nothing pays until someone asks.
            typer.echo(f"nothing is paying it yet: pay it with `payflow pay {batch_id}`")
    raise typer.Exit(0)
