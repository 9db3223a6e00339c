"""The refund batch flow: prepare (read, check, register), balance, submit, track, report."""

from __future__ import annotations

from dataclasses import dataclass, field

from prefect import flow, get_run_logger

from payflow.approvals.identity import deployment_maker, names_nobody, worker_account_note
from payflow.connections import run_target
from payflow.expected import quiet_expected_failures
from payflow.flows.approval import BatchStopped
from payflow.paying import SubmitStats
from payflow.settings import Settings
from payflow.stopping import STOP, RunInterrupted
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
    """Refund every valid row of a refund file exactly once and report each to its end. The
    batch's maker is `maker` (the command line passes its operator; as daily-payouts, one-batch
    and rerun-failed name it), else this worker's account, which the log says is not a person."""
    quiet_expected_failures()
    settings = Settings()
    made_by = deployment_maker(settings, maker)
    if names_nobody(maker):
        get_run_logger().warning(worker_account_note(made_by))
    reports = out_dir or settings.reports_location()
    with run_target(settings, api_url, sandbox, callback_url) as target:
        prepared = prepare_refund_file(target, path, sheet, made_by)
        batch_id = prepared.batch_id
        balance = check_refund_funds(target, batch_id)
        if not balance.ok:
            write_refund_batch_report(target, batch_id, reports, target.sandbox)
            raise BatchStopped(balance.message.replace("nothing submitted", "nothing refunded"))
        stats = submit_refund_batch(target, batch_id, new_worker_id())
        if STOP.requested():
            raise RunInterrupted(batch_id, STOP.signal_name)
        tracked = track_refund_batch(target, batch_id)
        if STOP.requested():
            raise RunInterrupted(batch_id, STOP.signal_name)
        paths = write_refund_batch_report(target, batch_id, reports, target.sandbox)
    return RefundBatchResult(
        batch_id=batch_id,
        rows=prepared.validation.rows,
        rejected=prepared.validation.rejected,
        already_known=prepared.validation.known,
        statuses=dict(tracked.counts),
        report_csv=str(paths.csv),
        report_xlsx=str(paths.xlsx),
        sandbox=target.sandbox,
        pending=tracked.pending_external_ids,
        stats=stats,
        notices=[notice.message for notice in prepared.file.notices],
    )
