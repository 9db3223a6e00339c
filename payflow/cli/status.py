"""`payflow status BATCH_ID`: counts per state and the rows not yet final, from the ledger."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from payflow.cli.app import app, fail
from payflow.cli.setup import prepare
from payflow.ledger import Ledger
from payflow.ledger.states import UNFINISHED_STATES


@app.command()
def status(
    batch_id: Annotated[str, typer.Argument(help="Batch id printed by `payflow run`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout only.")] = False,
) -> None:
    """Show how many rows of a batch stand in each state, and which are not final yet."""
    settings = prepare()
    ledger = Ledger.open(settings.ledger_url_or_default())
    try:
        if not ledger.batch_exists(batch_id):
            fail(f"no batch {batch_id!r} in the ledger at {settings.home}")
        counts = ledger.batch_summary(batch_id)
        pending = [
            {"row": ref.row_number, "externalId": ref.external_id, "state": str(ref.state)}
            for ref in ledger.batch_rows(batch_id)
            if ref.state in UNFINISHED_STATES
        ]
    finally:
        ledger.close()
    if as_json:
        typer.echo(json.dumps({"batch_id": batch_id, "statuses": counts, "pending": pending}))
    else:
        typer.echo(f"batch {batch_id}")
        for state, count in sorted(counts.items()):
            typer.echo(f"  {state:<16} {count}")
        if pending:
            typer.echo(f"not final yet ({len(pending)}):")
            for row in pending[:50]:
                typer.echo(f"  row {row['row']:>6}  {row['externalId']}  {row['state']}")
            if len(pending) > 50:
                typer.echo(f"  ... and {len(pending) - 50} more (use --json for all)")
    raise typer.Exit(1 if pending or set(counts) - {"COMPLETED"} else 0)
