"""The refund batch flow: prepare (read, check, register), balance, submit, track, report."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from prefect import flow, get_run_logger

from payflow.approvals.identity import deployment_maker, names_nobody, worker_account_note
from payflow.connections import run_target
from payflow.expected import quiet_expected_failures
from payflow.flows.approval import BatchStopped, ensure_approved
from payflow.paying import SubmitStats
from payflow.settings import Settings
from payflow.stopping import STOP, RunInterrupted
from payflow.tasks.approve_batch import submit_in_flow
from payflow.tasks.connections import new_worker_id
from payflow.tasks.refund_intake import check_refund_funds, prepare_refund_file
from payflow.tasks.refund_send import (
    submit_refund_batch,
    track_refund_batch,
    write_refund_batch_report,
)

FINAL_OK = frozenset({"COMPLETED"})


@dataclass
class RefundBatchResult:
    """What a refund run did, every figure read from the ledger after the last change."""

    batch_id: str
    rows: int
    rejected: int
    already_known: int
    statuses: dict[str, int]
    report_csv: str
    report_xlsx: str
    sandbox: bool
    pending: list[str] = field(default_factory=list)
    stats: SubmitStats = field(default_factory=SubmitStats)
    notices: list[str] = field(default_factory=list)  # how the file's cells were read
    report_error: str = ""  # why the report was not written (its paths then ""), and the fix

    @property
    def all_completed(self) -> bool:
        """True only when every row of the batch ended COMPLETED."""
        return bool(self.statuses) and set(self.statuses) <= FINAL_OK


@flow(name="refund-batch", persist_result=False, log_prints=False)
def refund_batch(
    path: str,
    out_dir: str | None = None,
    sheet: str | None = None,
    api_url: str | None = None,
    sandbox: bool = False,
    callback_url: str | None = None,
    maker: str | None = None,
) -> RefundBatchResult:
    """Refund every valid row of a refund file exactly once and report each to its end, once
    the ledger's policy lets the batch go (over its limits: after a checker's approval, else
    `ApprovalNeeded` and nothing is refunded). The batch's terms name the command line's
    signed-in maker running this flow in-process; `maker` (else this worker's account, which
    the log says is not a person) is kept in the history only."""
    quiet_expected_failures()
    settings = Settings()
    made_by = deployment_maker(settings, maker)
    if names_nobody(maker):
        get_run_logger().warning(worker_account_note(made_by))
    reports = out_dir or settings.reports_location()
    # What writes the report once there is room: the same file again refunds nothing twice.
    again = f"payflow refund {shlex.quote(path)} --yes --out DIR"
    with run_target(settings, api_url, sandbox, callback_url) as target:
        prepared = prepare_refund_file(target, path, sheet, made_by)
        batch_id = prepared.batch_id
        # As a payout batch: its terms recorded as its signed-in maker's (none in a deployed
        # run), then nothing is refunded before the ledger says it is approved under them.
        submit_in_flow(target.ledger_url, batch_id, made_by)
        ensure_approved(target.ledger_url, batch_id, wait=False)
        balance = check_refund_funds(target, batch_id)
        if not balance.ok:
            write_refund_batch_report(target, batch_id, reports, target.sandbox, again)
            raise BatchStopped(balance.message.replace("nothing submitted", "nothing refunded"))
        stats = submit_refund_batch(target, batch_id, new_worker_id())
        if STOP.requested():
            raise RunInterrupted(batch_id, STOP.signal_name)
        tracked = track_refund_batch(target, batch_id)
        if STOP.requested():
            raise RunInterrupted(batch_id, STOP.signal_name)
        written = write_refund_batch_report(target, batch_id, reports, target.sandbox, again)
    return RefundBatchResult(
        batch_id=batch_id,
        rows=prepared.validation.rows,
        rejected=prepared.validation.rejected,
        already_known=prepared.validation.known,
        statuses=dict(tracked.counts),
        report_csv=str(written.paths.csv) if written.paths else "",
        report_xlsx=str(written.paths.xlsx) if written.paths else "",
        sandbox=target.sandbox,
        pending=tracked.pending_external_ids,
        stats=stats,
        notices=[notice.message for notice in prepared.file.notices],
        report_error=written.error,
    )
