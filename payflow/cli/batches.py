"""`payflow batches`: every batch of the ledger (payouts, refunds, links), newest first, searched
by date, file, maker and standing, a page at a time."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Annotated

import typer

from payflow.cli.app import app, fail
from payflow.cli.setup import prepare
from payflow.ledger.service_binding import sandbox_served
from payflow.links.records import status_label
from payflow.redact import printable
from payflow.runtime import NO_REAL_MONEY_MOVED, open_ledger
from payflow.wording import counted, state_words

PER_PAGE = 20


def _since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        fail(f"--since {text!r} is no date: give it as YYYY-MM-DD, e.g. 2026-11-01")
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


@app.command("batches")
def batches_command(
    since: Annotated[
        str | None, typer.Option("--since", help="Only batches registered on or after YYYY-MM-DD.")
    ] = None,
    file: Annotated[
        str | None, typer.Option("--file", help="Only batches whose file name contains this.")
    ] = None,
    maker: Annotated[
        str | None, typer.Option("--maker", help="Only batches made by this name.")
    ] = None,
    state: Annotated[
        str | None,
        typer.Option(
            "--state",
            help="Only batches that stand so: not sent yet, waiting for approval, declined, "
            "approval expired, in progress, paid, not all paid, nothing to pay, refunded, "
            "refunds not final, not all refunded, links open.",
        ),
    ] = None,
    page: Annotated[int, typer.Option("--page", min=1, help="Which page (1: the newest).")] = 1,
    per_page: Annotated[
        int, typer.Option("--per-page", min=1, max=500, help="Batches per page.")
    ] = PER_PAGE,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout only.")] = False,
) -> None:
    """List the ledger's batches newest first, searched by date, file, maker or standing."""
    from payflow.batch_list import STANDINGS, BatchSearch, approval_words, list_batches

    settings = prepare()
    if state is not None and not any(s.startswith(state.strip().casefold()) for s in STANDINGS):
        fail(f"--state {state!r} is none of: {', '.join(STANDINGS)}")
    search = BatchSearch(_since(since), file, maker, state.strip() if state else None)
    with open_ledger(settings) as ledger:
        found = list_batches(
            ledger,
            search,
            approval_words(ledger),
            page=page,
            per_page=per_page,
        )
        sandbox = sandbox_served(ledger)
    if as_json:
        listed = [
            {
                "batch_id": b.batch_id,
                "kind": b.kind,
                "source_name": b.source,
                "created_at": b.created_at.isoformat(),
                "made_by": b.made_by,
                "statuses": b.statuses,
                "standing": b.standing,
            }
            for b in found.batches
        ]
        summary = {"batches": listed, "total": found.total, "page": page, "pages": found.pages}
        typer.echo(json.dumps({**summary, "sandbox": sandbox}))
        raise typer.Exit(0)
    searched = any(v is not None for v in (since, file, maker, state))
    what = "batches that match" if searched else "batches"
    if not found.batches:
        where = "on this page" if found.total else f"in the ledger {settings.ledger_place}"
        typer.echo(
            f"no {what} {where}" + (f" (there are {found.pages} pages)" if found.total else "")
        )
        raise typer.Exit(0)
    typer.echo(
        f"{counted(found.total, 'batch')} in the ledger {settings.ledger_place}"
        f"{' match' if searched else ''}, newest first (page {page} of {found.pages}):"
    )
    for b in found.batches:
        words = status_label if b.kind == "links" else state_words
        states = ", ".join(f"{n} {words(s)}" for s, n in sorted(b.statuses.items()))
        when = f"{b.created_at:%Y-%m-%d %H:%M} UTC"
        by = f" by {b.made_by}" if b.made_by else ""
        rows = counted(sum(b.statuses.values()), "row")
        line = f"  {b.batch_id}  {when}  {b.kind}  {b.source}{by}  {rows}: {states}: {b.standing}"
        typer.echo(printable(line))
    if page < found.pages:
        typer.echo(
            f"`payflow batches --page {page + 1}` (with the same options) shows the next page"
        )
    typer.echo("`payflow status BATCH_ID` shows one batch and its rows not final yet")
    if sandbox:
        typer.echo(NO_REAL_MONEY_MOVED)
