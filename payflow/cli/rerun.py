"""`payflow rerun BATCH_ID`: preview failed rows, or rerun the reviewed ones as new attempts."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from payflow.api.errors import PaymentsApiError
from payflow.approvals import PolicyError
from payflow.approvals.store import active_policy
from payflow.cli.app import app, fail
from payflow.cli.batch_kinds import require_payout_batch
from payflow.cli.ledger_checks import held_lines, not_paid_lines
from payflow.cli.setup import prepare, readable_file
from payflow.intake import BatchFileError
from payflow.ledger.service_binding import sandbox_served
from payflow.paying import InsufficientBalanceError
from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.reconcile import FailureTableError
from payflow.rerun import (
    CHOOSE_ROWS,
    RerunRefused,
    Selection,
    choose,
    classifier,
    correction_lines,
    find_candidates,
    parse_selection,
    plan_attempts,
    preview_lines,
    read_corrections,
)
from payflow.rerun.preview import approval_line
from payflow.runtime import NO_REAL_MONEY, NO_REAL_MONEY_MOVED, api_endpoint, open_ledger
from payflow.settings import Settings
from payflow.wording import RUN_AGAIN_TO_RESUME, api_trouble


def _preview(
    settings: Settings, batch_id: str, selection: Selection, corrections: Path | None
) -> list[str]:
    with open_ledger(settings) as ledger:
        candidates = find_candidates(ledger, batch_id, classifier(settings.failure_classes_path))
        chosen = choose(candidates, selection)
        lines = preview_lines(candidates, chosen, selection)
        if chosen and not selection.empty:
            # It did not say that the rerun may wait for a second person, nor why.
            policy = active_policy(ledger).policy
            lines.insert(-1, f"  the rerun {approval_line(chosen, policy)}")
        if corrections is None or not chosen:
            return lines
        # Checked now as --reviewed would check them (the batch rules, with the API's banks and
        # services lists), so a broken corrections file is found before anyone confirms.
        fixes = read_corrections(corrections)
        from payflow.cli.validate import validate_with  # the batch rules load only for this

        with api_endpoint(settings) as endpoint:
            attempts = plan_attempts(
                ledger, chosen, fixes, lambda raw: validate_with(endpoint, raw, settings=settings)
            )
        parents = {c.external_id: ledger.payout_instruction(c.external_id) for c in chosen}
    changed = correction_lines(
        {ext: parent for ext, parent in parents.items() if parent is not None}, attempts
    )
    return [*lines[:-1], *(changed or ["  the corrections change none of these rows"]), lines[-1]]


@contextmanager
def _stopped_is_one_line(stopped: type[Exception]) -> Iterator[None]:
    """A rerun batch stopped before paying (balance): one line, exit 2."""
    try:
        yield
    except stopped as exc:
        fail(str(exc))


@app.command("rerun")
def rerun_command(
    batch_id: Annotated[str, typer.Argument(help="The batch whose failed rows to send again.")],
    rows: Annotated[str, typer.Option("--rows", help="Source row numbers, e.g. 4,9 or 4-6.")] = "",
    message: Annotated[
        str | None, typer.Option("--message", help="Rows failed with this statusMessage.")
    ] = None,
    failure_class: Annotated[
        str | None, typer.Option("--class", help="retryable, fix_details, do_not_retry, unknown.")
    ] = None,
    all_failed: Annotated[bool, typer.Option("--all-failed", help="Every failed row.")] = False,
    corrections: Annotated[
        Path | None,
        typer.Option(
            "--corrections",
            help="CSV/XLSX by externalId: requisites, bankName, name.",
            readable=False,
        ),
    ] = None,
    reviewed: Annotated[
        bool, typer.Option("--reviewed", help="I have read why they failed: send them.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
) -> None:
    """Rerun reviewed failed rows as new linked attempts; without --reviewed only a preview.

    Without --reviewed, show what would be sent and send nothing."""
    settings = prepare()
    with open_ledger(settings) as ledger:
        require_payout_batch(settings, ledger, batch_id)
        sandbox = sandbox_served(ledger)
    try:
        selection = parse_selection(rows, message, failure_class, all_failed)
        if not reviewed:
            if corrections is not None:
                readable_file(corrections)
            lines = _preview(settings, batch_id, selection, corrections)
            if as_json:
                typer.echo(json.dumps({"preview": lines, "sandbox": sandbox}))
            else:
                typer.echo("\n".join([*lines, *([NO_REAL_MONEY_MOVED] if sandbox else [])]))
            raise typer.Exit(0)
        if selection.empty:
            fail(f"{CHOOSE_ROWS}; nothing was sent")
        prefect = TemporaryPrefect.for_settings(settings)  # boots while Prefect is imported below
        # Imported here: loading Prefect costs seconds a preview need not pay.
        from payflow.acts.context import acting_as
        from payflow.cli.signin import acting
        from payflow.flows.approval import BatchStopped
        from payflow.flows.rerun import rerun_failed, rerun_result, summary_lines

        with open_ledger(settings) as ledger:
            maker = acting(settings, ledger, "maker", "reruns rows")
        with (
            api_endpoint(settings) as endpoint,
            _stopped_is_one_line(BatchStopped),
            acting_as(maker),
            prefect.flow_settings(),
        ):
            prefect.ready()
            if endpoint.is_sandbox:
                print(NO_REAL_MONEY, file=sys.stderr)
            state = rerun_failed(
                batch_id=batch_id,
                rows=rows,
                message=message,
                failure_class=failure_class,
                all_failed=all_failed,
                reviewed=True,
                corrections=str(corrections) if corrections else None,
                maker=maker.name,
                wait_for_approval=False,
                api_url=endpoint.base_url,
                sandbox=endpoint.is_sandbox,
                callback_url=settings.webhook_url,
                return_state=True,
            )
            result = rerun_result(state)
    except (
        RerunRefused,
        BatchFileError,
        PolicyError,
        PrefectServerNotStarted,
        FailureTableError,
    ) as exc:
        fail(str(exc))
    except InsufficientBalanceError as exc:
        fail(str(exc))
    except PaymentsApiError as exc:
        fail(api_trouble(exc, then=RUN_AGAIN_TO_RESUME, sandbox=settings.uses_sandbox))
    # Every row still unpaid by its latest attempt, this rerun's included, as a run lists them.
    not_paid = not_paid_lines(settings, batch_id)
    with open_ledger(settings) as ledger:
        reruns = ledger.rerun_batches(batch_id)
    for rerun_id in reruns:  # a held attempt is in no batch paid or waiting
        not_paid += held_lines(settings, rerun_id, f"payflow pay {rerun_id} --allow-repeat")
    if as_json:
        typer.echo(json.dumps(asdict(result)))
        for line in not_paid:
            typer.echo(line, err=True)
    else:
        closing = [NO_REAL_MONEY_MOVED] if result.sandbox else []
        typer.echo("\n".join([*summary_lines(result), *not_paid, *closing]))
    raise typer.Exit(0 if result.all_paid else 1)
