"""`payflow reconcile BATCH_ID` and `payflow findings BATCH_ID [--ack ID --note TEXT]`."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from payflow.acts.actor import NotAllowed
from payflow.acts.findings import acknowledge
from payflow.api.errors import PaymentsApiError
from payflow.cli.app import app, fail
from payflow.cli.batch_kinds import require_payout_batch
from payflow.cli.setup import failure_classes, prepare, writable_folder
from payflow.cli.signin import signed_in_operator
from payflow.ledger import FindingState, FindingView, Ledger, UnknownFinding
from payflow.opening import why_not_written
from payflow.redact import printable
from payflow.runtime import NO_REAL_MONEY, api_endpoint, client_for, open_ledger
from payflow.settings import Settings
from payflow.wording import api_trouble, counted, report_not_written

if TYPE_CHECKING:
    from payflow.reporting import BatchReport


def _open(settings: Settings, batch_id: str) -> Ledger:
    ledger = open_ledger(settings)
    try:
        require_payout_batch(settings, ledger, batch_id)
    except BaseException:
        ledger.close()  # the command stops here: nothing else would close it
        raise
    return ledger


@app.command("reconcile")
def reconcile_command(
    batch_id: Annotated[str, typer.Argument(help="Batch id printed by `payflow run`.")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the report.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
) -> None:
    """Re-fetch every payout of a batch, record findings, write the reconciliation report."""
    settings = prepare()
    writable_folder(out)
    ledger = _open(settings, batch_id)  # a mistyped batch id is named before anything else
    try:
        if settings.uses_sandbox:
            # A new embedded sandbox knows none of a past run's payouts: every row would be a
            # false "missing at the service" finding. The report alone needs no service.
            fail(
                "reconcile asks the payments service, and a past run's embedded sandbox is gone: "
                "set PAYFLOW_API_URL (and PAYFLOW_API_TOKEN), or read the report of that run"
            )
        # Here, not at the top: `payflow findings` shares this module and reads the ledger
        # alone, and a refusal above needs none of them (about 0.4 s of CPU: the API client,
        # the reconciliation, openpyxl for the report).
        from payflow.acts.reconcile import reconcile
        from payflow.connections import check_service_binding
        from payflow.progress_line import reconcile_progress
        from payflow.reconcile import options_from
        from payflow.reconcile.attention import unfinished
        from payflow.reporting import (
            build_summary,
            settlement_lines,
            summary_markdown,
            write_batch_report,
        )

        # The API knows none of the sandbox's payouts: each would be a false "missing" finding,
        # in a report with no word of the sandbox.
        check_service_binding(settings, sandbox=False)
        classes = failure_classes(settings)
        operator = signed_in_operator(settings, ledger, "reconciles a batch")
        with api_endpoint(settings) as endpoint:
            if endpoint.is_sandbox:
                print(NO_REAL_MONEY, file=sys.stderr)

            options = options_from(settings)
            # On stderr: `--json` stays one line.
            progress = reconcile_progress(batch_id, partial(print, file=sys.stderr))

            async def run() -> int:
                # In flight: PAYFLOW_RECONCILE_CONCURRENCY's, not the pay run's bound.
                async with client_for(
                    endpoint, settings, max_in_flight=options.concurrency
                ) as client:
                    result = await reconcile(client, ledger, batch_id, operator, options, progress)
                return result.unanswered

            unanswered = asyncio.run(run())
        left = unfinished(ledger.batch_counts(batch_id).by_state)
        out_dir = out or settings.reports_location()
        not_written = ""
        try:
            written = write_batch_report(
                ledger,
                batch_id,
                out_dir,
                sandbox=endpoint.is_sandbox,
                classes=classes,
                made_by=operator.name,
            )
            report: BatchReport | None = written
            summary = written.summary
        except OSError as exc:
            # The findings are recorded: the figures come from the ledger, the report later.
            report = None
            command = f"payflow reconcile {batch_id} --out DIR"
            not_written = report_not_written(out_dir, why_not_written(exc), command)
            summary = build_summary(ledger, batch_id, classes, sandbox=endpoint.is_sandbox)
    except PaymentsApiError as exc:
        fail(api_trouble(exc, then="run again later"))
    finally:
        ledger.close()
    open_findings = summary.open_findings()
    if as_json:
        print(
            json.dumps(
                {
                    "batch_id": batch_id,
                    "open_findings": len(open_findings),
                    "findings_by_kind": _by_kind(open_findings),
                    "acknowledged_findings": len(summary.unresolved_findings())
                    - len(open_findings),
                    "unanswered": unanswered,
                    "rows_not_final": summary.settlement.not_final,
                    "rows_disagreeing_with_service": summary.settlement.disagreeing,
                    "settled": summary.settled and not unanswered,
                    "report": str(report.xlsx) if report else None,
                    "csv": str(report.csv) if report else None,
                    "version": (
                        report.version.xlsx_path if report and report.version is not None else None
                    ),
                    **({"report_error": not_written} if not_written else {}),
                    "unsent": left.unsent,
                    "unconfirmed": left.unconfirmed,
                    "sandbox": endpoint.is_sandbox,
                }
            )
        )
    else:
        print(summary_markdown(summary))
        if unanswered:
            payouts = counted(unanswered, "payout")
            print(f"{payouts} got no answer from the service; run again later")
        if line := left.line(batch_id):
            print(line)
        for line in settlement_lines(summary.settlement, batch_id):
            print(line)
        if report is not None:
            print(f"report: {printable(str(report.xlsx))}")
            print(f"        {printable(str(report.csv))}")
            if report.version is not None:
                print(f"kept as {report.version.xlsx_path} ({report.version.changes})")
    if not_written:
        print(not_written, file=sys.stderr if as_json else sys.stdout)
    raise typer.Exit(
        0
        if summary.settled and not (unanswered or not_written or left.unsent or left.unconfirmed)
        else 1
    )


def _by_kind(findings: list[FindingView]) -> dict[str, int]:
    return dict(Counter(finding.kind for finding in findings))


@app.command("findings")
def findings_command(
    batch_id: Annotated[str, typer.Argument(help="Batch id.")],
    ack: Annotated[int | None, typer.Option("--ack", help="Acknowledge this finding id.")] = None,
    note: Annotated[str | None, typer.Option("--note", help="Why (needed with --ack).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """List a batch's findings, or acknowledge one with a note (kept in its history)."""
    settings = prepare()
    ledger = _open(settings, batch_id)
    try:
        if ack is not None:
            if not note or not note.strip():
                fail("--ack needs --note TEXT saying why")
            operator = signed_in_operator(settings, ledger, "acknowledges a finding")
            try:
                acknowledge(ledger, batch_id, ack, operator, note)
            except (UnknownFinding, NotAllowed) as exc:
                fail(f"{exc}; nothing was recorded")
        findings = ledger.findings(batch_id)
    finally:
        ledger.close()
    still_open = sum(1 for f in findings if f.state == FindingState.OPEN)
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": f.id,
                        "row": f.row_number,
                        "externalId": f.external_id,
                        "kind": f.kind,
                        "state": f.state,
                        "detail": f.detail,
                        "acknowledged_by": f.acknowledged_by,
                        "acknowledged_at": None
                        if f.acknowledged_at is None
                        else f.acknowledged_at.isoformat(),
                        "note": f.acknowledged_note,
                    }
                    for f in findings
                ]
            )
        )
    else:
        if ack is not None:
            # It printed the list alone and exited 1: nothing said the acknowledgement was taken.
            print(f"finding #{ack} acknowledged (note kept in its history)")
        if not findings:
            print(f"batch {batch_id}: no findings")
        for f in findings:
            line = f"  #{f.id:<5} row {f.row_number:>6}  {f.kind:<28} {f.state:<13} {f.detail}"
            print(printable(line))  # a detail may quote the service's text, which a terminal obeys
            if f.acknowledgement:
                print(printable(f"{'':<9}acknowledged by {f.acknowledgement}"))
        if still_open:
            print(
                f"{counted(still_open, 'finding')} still open (exit 1): look into each, then "
                f"`payflow findings {batch_id} --ack ID --note TEXT`"
            )
        elif findings:
            print("no finding is open (exit 0)")
    raise typer.Exit(1 if still_open else 0)
