"""`payflow stop BATCH_ID`: cancel the batch's pay runs through Prefect; every row stays."""

from __future__ import annotations

from typing import Annotated

import typer

from payflow.cli.app import app, fail
from payflow.cli.batch_kinds import require_payout_batch
from payflow.cli.setup import prepare
from payflow.runtime import open_ledger


@app.command("stop")
def stop_command(
    batch_id: Annotated[str, typer.Argument(help="The batch whose pay runs to stop.")],
) -> None:
    """Stop a batch's pay runs on Prefect (cancelled); its rows stay in the ledger, and
    `payflow pay` goes on later. Exit 1 when no run was there to stop."""
    settings = prepare()
    from payflow.approvals.decide import prefect_api_configured
    from payflow.cli.signin import signed_in_operator

    with open_ledger(settings) as ledger:
        require_payout_batch(settings, ledger, batch_id)
        # Who stopped it is recorded and shown in `payflow status`: a signed-in operator.
        stopper = signed_in_operator(settings, ledger, "stops a batch's pay runs")
        if not prefect_api_configured():
            fail(
                "no Prefect server is configured (PREFECT_API_URL): a batch paid by `payflow run` "
                "or `payflow pay` stops with Ctrl-C in its terminal, between two payouts"
            )
        from payflow.acts.stop import stop

        # Prefect down: the stop still reaches a run that beats, through the ledger.
        stopped = stop(ledger, batch_id, stopper, settings.run_stale_window)
    typer.echo(stopped.line(batch_id))
    raise typer.Exit(0 if stopped.recorded else 1)
