"""`payflow watchdog [--once]`: the watchdog deployment's work from a shell or cron."""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer

from payflow.cli.app import app, fail
from payflow.cli.setup import prepare
from payflow.runtime import ConfigurationError, open_ledger


@app.command("watchdog")
def watchdog_command(
    once: Annotated[bool, typer.Option("--once", help="Look once, then exit.")] = False,
    every: Annotated[
        float, typer.Option("--every", min=10, help="Seconds between looks (without --once).")
    ] = 180.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines only.")] = False,
) -> None:
    """Resume every batch whose pay run died, once, or open a finding; exit 1 when a batch
    could not be resumed here (--once)."""
    settings = prepare()
    from payflow.approvals.decide import prefect_api_configured
    from payflow.stopping import stop_on_signals
    from payflow.watchdog import Verdict, run_watchdog
    from payflow.watchdog.report import watch_lines

    with_prefect = prefect_api_configured()
    left: list[str] = []
    with stop_on_signals() as stop:
        while True:
            try:
                with open_ledger(settings) as ledger:
                    watched = run_watchdog(settings, ledger, with_prefect=with_prefect)
            except ConfigurationError as exc:
                fail(str(exc))
            if as_json:
                for one in watched:
                    print(
                        json.dumps(
                            {
                                "batch_id": one.batch_id,
                                "verdict": one.verdict.value,
                                "line": one.line,
                                "run_id": one.run_id,
                            }
                        )
                    )
            else:
                for line in watch_lines(watched):
                    print(line, flush=True)
            left = [
                w.batch_id for w in watched if w.verdict in (Verdict.NOT_RESUMED, Verdict.NEEDS_PAY)
            ]
            deadline = time.monotonic() + every
            while not once and not stop.requested() and time.monotonic() < deadline:
                time.sleep(0.2)
            if once or stop.requested():
                break
    raise typer.Exit(1 if left else 0)
