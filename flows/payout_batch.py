"""A file to a paid batch, for deployments: intake, then pay exactly the batch intake registered."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from prefect import flow
from prefect.client.schemas.objects import State
from prefect.states import Failed

from payflow.approvals.identity import dropped_by, file_maker
from payflow.connections import run_target
from payflow.expected import quiet_expected_failures
from payflow.flows.approval import APPROVAL_TIMEOUT_SECONDS
from payflow.flows.intake_batch import intake_batch
from payflow.flows.pay_batch import pay_batch
from payflow.run_results import PayResult
from payflow.settings import Settings
from payflow.tasks.approve_batch import submit_in_flow


@flow(name="payout-batch", persist_result=False, log_prints=False)
def payout_batch(
    path: str,
    out_dir: str | None = None,
    sheet: str | None = None,
    strict: bool = False,
    chunk_size: int | None = None,
    max_in_flight: int | None = None,
    track_deadline: float | None = None,
    approval_timeout_seconds: int = APPROVAL_TIMEOUT_SECONDS,
    maker: str | None = None,
) -> PayResult | State[Any]:
    """Register the file as a batch, then pay that batch id (pausing for approval when the
    approval policy asks for it). The maker is the file's owner, or for a file the worker's
    own user owns `maker` (as daily-payouts and rerun-failed name it), else the worker's user
    (`file_maker`)."""
    quiet_expected_failures()
    settings = Settings()
    # One API (or one embedded sandbox) for both halves of the run.
    owner, claimed = dropped_by(Path(path)), file_maker(Path(path), settings, maker)
    with run_target(settings) as target:
        intake = intake_batch(
            path,
            sheet=sheet,
            strict=strict,
            out_dir=out_dir,
            api_url=target.api_url,
            sandbox=target.sandbox,
            made_by=claimed,
        )
        submit_in_flow(target.ledger_url, intake.batch_id, claimed, owner)
        paid = pay_batch(
            intake.batch_id,
            out_dir=out_dir,
            api_url=target.api_url,
            sandbox=target.sandbox,
            callback_url=target.callback_url,
            chunk_size=chunk_size,
            max_in_flight=max_in_flight,
            track_deadline=track_deadline,
            approval_timeout_seconds=approval_timeout_seconds,
            return_state=True,
        )
    return _as_this_runs(paid)


def _as_this_runs(paid: State[Any]) -> PayResult | State[Any]:
    """The pay run's end as this run's own: its result, or a Failed state of the same name and
    message (a batch not all paid ends this run `NOT_ALL_PAID`, naming its rows and command).

    Returned as it is, the subflow's state was an "upstream" state to Prefect, which ended this
    run Failed with "1/1 states failed." and nothing of the batch."""
    if paid.is_completed():
        return cast(PayResult, paid.result())
    return Failed(name=paid.name, message=paid.message, data=paid.result(raise_on_failure=False))
