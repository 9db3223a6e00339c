"""`payflow pay BATCH_ID`: pay a batch already in the ledger (registered by `payflow run`, a
rerun or a deployment) once its approvals are given; the paying half of `payflow run`."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from payflow.acts.pay import approval_needed
from payflow.acts.repeats import allow_repeats
from payflow.approvals.stops import ApprovalNeeded, BatchStopped
from payflow.cli.app import app, fail
from payflow.cli.batch_kinds import require_payout_batch
from payflow.cli.past_sandbox import as_the_ledger_holds_it
from payflow.cli.run import (
    PAY_STOPS,
    finish,
    pay_in_process,
    paying_endpoint,
    say_sandbox,
    stopped,
    waiting,
)
from payflow.cli.setup import prepare, writable_folder
from payflow.cli.signin import signed_in_operator
from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.runtime import open_ledger


@app.command("pay")
def pay_command(
    batch_id: Annotated[str, typer.Argument(help="A batch id from the ledger.")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the report.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
    allow_repeat: Annotated[
        bool,
        typer.Option(
            "--allow-repeat",
            help="Pay rows held as repeats of a recent payout (another person then approves).",
        ),
    ] = False,
) -> None:
    """Pay the batch's rows not yet sent once its approval is complete, track, report; exit 1
    (nothing sent) while it still waits for approval."""
    settings = prepare()
    writable_folder(out)
    from payflow.connections import binding_checked_here  # the API client's imports: here

    try:
        with ExitStack() as checked:
            with open_ledger(settings) as ledger:  # opens (and migrates) it first
                require_payout_batch(settings, ledger, batch_id)
                # Before any figure of the ledger is shown (the progress line came first) and
                # before a past sandbox's batch is finished from the ledger: a ledger of the other
                # kind of service is refused alone, as `payflow run` refuses it. The pay flow
                # below, run here inside the block, takes it as checked.
                checked.enter_context(binding_checked_here(settings, settings.uses_sandbox))
                # Who pays is recorded (the pay run's start and end): a signed-in operator.
                payer = signed_in_operator(settings, ledger, "pays a batch")
                if allow_repeat:
                    allow_repeats(ledger, batch_id, payer)
                rows = ledger.batch_counts(batch_id).rows
                needed = approval_needed(ledger, batch_id)
            if settings.uses_sandbox and (held := as_the_ledger_holds_it(settings, batch_id, out)):
                finish(settings, held, as_json=as_json)
            # A batch still waiting for approval is refused here, before Prefect is loaded and
            # its temporary server started: seconds of CPU for a one-line answer.
            if needed is not None:
                raise needed
            prefect = TemporaryPrefect.for_settings(settings)
            with paying_endpoint(settings) as (endpoint, callback_url):
                say_sandbox(endpoint)
                prefect.ready()
                live = sys.stderr.isatty() and not as_json
                result = pay_in_process(
                    settings,
                    batch_id,
                    rows,
                    endpoint,
                    callback_url,
                    out_dir=str(out) if out else None,
                    live=live,
                    payer=payer,
                    prefect=prefect,
                )
    except ApprovalNeeded as exc:
        waiting(settings, exc, as_json=as_json)
    except PrefectServerNotStarted as exc:
        fail(str(exc))
    except (*PAY_STOPS, BatchStopped) as exc:
        stopped(settings, batch_id, exc, f"payflow pay {batch_id}")
    finish(settings, result, as_json=as_json, again=f"payflow pay {batch_id} --allow-repeat")
