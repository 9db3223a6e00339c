"""The payout batch flow: design.md's data flow, one task per step, the work done in tasks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import cast
from uuid import UUID

from prefect import flow
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    update_progress_artifact,
)
from prefect.flow_runs import pause_flow_run
from prefect.futures import PrefectFuture, as_completed, wait
from prefect.input import RunInput

from payflow.model import canonical_amount
from payflow.paying import ChunkLoop, ChunkResult, SubmitStats
from payflow.runtime import api_endpoint
from payflow.settings import Settings
from tasks.connections import RunTarget, new_worker_id
from tasks.read_batch import read_batch
from tasks.register_rows import register_rows
from tasks.resolve_banks import load_services, prefetched, resolve_banks, sbp_phones
from tasks.submit_payouts import (
    check_merchant_balance,
    release_dead_leases,
    submit_payout_chunk,
    totals_to_pay,
)
from tasks.track_payouts import find_corrections, track_payouts
from tasks.validate_batch import validate_batch
from tasks.write_report import write_report

APPROVAL_TIMEOUT_SECONDS = 24 * 3600
SUBMIT_LANES = 2


class BatchApproval(RunInput):
    """What an operator answers when a deployed run pauses before paying."""

    approve: bool
    approved_by: str = ""


class BatchStopped(Exception):
    """The batch stopped before its first payout (balance, approval); nothing was paid."""


@dataclass
class BatchResult:
    """What a run did, for the command line and the JSON summary."""

    batch_id: str
    rows: int
    rejected: int
    submitted: int
    statuses: dict[str, int]
    report_csv: str
    report_xlsx: str
    sandbox: bool
    pending: list[str] = field(default_factory=list)
    corrections: int = 0
    already_known: int = 0
    conflicts: int = 0
    stats: SubmitStats = field(default_factory=SubmitStats)

    @property
    def all_completed(self) -> bool:
        """True only when every row of the batch ended COMPLETED."""
        return bool(self.statuses) and set(self.statuses) == {"COMPLETED"}


@contextmanager
def run_target(
    settings: Settings, api_url: str | None, sandbox: bool, callback_url: str | None
) -> Iterator[RunTarget]:
    """The given API, or (a deployment run) the configured one or an embedded sandbox."""
    ledger_url = settings.ledger_url_or_default()
    if api_url is not None:
        yield RunTarget(api_url, ledger_url, sandbox, callback_url or settings.webhook_url)
        return
    with api_endpoint(settings) as endpoint:
        yield RunTarget(endpoint.base_url, ledger_url, endpoint.is_sandbox, settings.webhook_url)


def _totals_markdown(totals: dict[str, Decimal]) -> str:
    lines = ["| currency | to pay |", "|---|---|"]
    lines += [f"| {cur} | {canonical_amount(amount)} |" for cur, amount in sorted(totals.items())]
    return "\n".join(lines)


def _approve(batch_id: str, totals: dict[str, Decimal]) -> None:
    create_markdown_artifact(
        key="batch-approval",
        markdown=f"## Batch {batch_id} waits for approval\n\n{_totals_markdown(totals)}",
        description="Totals to pay; resume the run with approve=true to pay them.",
    )
    answer = pause_flow_run(
        wait_for_input=BatchApproval, timeout=APPROVAL_TIMEOUT_SECONDS, key=f"approve-{batch_id}"
    )
    if not answer.approve:
        raise BatchStopped(f"batch {batch_id} was not approved; nothing was paid")


@flow(name="payout-batch", persist_result=False, log_prints=False)
def payout_batch(
    path: str,
    approved: bool = False,
    out_dir: str | None = None,
    sheet: str | None = None,
    strict: bool = False,
    api_url: str | None = None,
    sandbox: bool = False,
    callback_url: str | None = None,
) -> BatchResult:
    """Validate, register, approve, submit, track and reconcile one batch file."""
    settings = Settings()
    reports = out_dir or str(settings.reports_dir())
    with run_target(settings, api_url, sandbox, callback_url) as target:
        raw = read_batch(path, sheet)
        services = load_services(target)
        banks = resolve_banks(target, sbp_phones(raw), concurrency=settings.max_in_flight)
        report = validate_batch(
            raw, services=services, banks_for_phones=prefetched(banks), strict=strict
        )
        registered = register_rows(report, target.ledger_url)
        batch_id = report.batch_id
        totals = totals_to_pay(target.ledger_url, batch_id)
        if totals and not approved:
            _approve(batch_id, totals)
        if totals:
            balance = check_merchant_balance(target, totals)
            if not balance.ok:
                write_report(target.ledger_url, batch_id, reports, target.sandbox)
                raise BatchStopped(balance.message)
        release_dead_leases(target, batch_id)
        stats = _submit_all(target, batch_id, report.valid)
        progress = cast(UUID, create_progress_artifact(0.0, description="rows final"))
        tracked = track_payouts(target, batch_id, str(progress))
        corrections = find_corrections(target, batch_id)
        paths = write_report(target.ledger_url, batch_id, reports, target.sandbox)
    statuses = dict(tracked.counts)
    result = BatchResult(
        batch_id=batch_id,
        rows=report.rows,
        rejected=report.rejected,
        submitted=sum(n for s, n in statuses.items() if s not in _NOT_SUBMITTED),
        statuses=statuses,
        report_csv=str(paths.csv),
        report_xlsx=str(paths.xlsx),
        sandbox=target.sandbox,
        pending=tracked.pending_external_ids,
        corrections=len(corrections),
        already_known=len(registered.already_known),
        conflicts=len(registered.conflicts),
        stats=stats,
    )
    create_markdown_artifact(key="batch-summary", markdown=_summary_markdown(result))
    return result


_NOT_SUBMITTED = frozenset({"VALIDATED", "SUBMITTING", "REJECTED", "CONFLICT", "SUBMIT_REJECTED"})


def _submit_all(target: RunTarget, batch_id: str, rows: int) -> SubmitStats:
    """Claim-and-submit chunks, one task each, in two lanes until the ledger has none left.

    Two chunk tasks run at a time, each with half the requests in flight, so one chunk's tail
    (its last requests, then the next claim) overlaps the other's full flight.
    """
    worker_id = new_worker_id()
    # Called from a sync flow, so the synchronous variant runs and returns the artifact id.
    progress = cast(UUID, create_progress_artifact(0.0, description="rows submitted"))
    running: dict[PrefectFuture[ChunkResult], ChunkLoop] = {}
    loops = [ChunkLoop() for _ in range(SUBMIT_LANES)]
    for loop in loops:
        running[submit_payout_chunk.submit(target, batch_id, worker_id, SUBMIT_LANES)] = loop
    while running:
        done = next(as_completed(list(running)))
        loop = running.pop(done)
        try:
            result = done.result()
        except Exception:
            # Let the other lane finish its chunk: it settles or releases the rows it holds.
            wait(list(running))
            raise
        if loop.goes_on_after(result):
            future = submit_payout_chunk.submit(target, batch_id, worker_id, SUBMIT_LANES)
            running[future] = loop
        if rows:
            sent = sum(lane.total.total for lane in loops)
            update_progress_artifact(progress, min(100.0, 100.0 * sent / rows))
    total = SubmitStats()
    for loop in loops:
        total.merge(loop.total)
    return total


def _summary_markdown(result: BatchResult) -> str:
    lines = [
        f"## Batch {result.batch_id}",
        "",
        "Embedded sandbox: no real money moved." if result.sandbox else "",
        f"Rows: {result.rows}, rejected: {result.rejected}, submitted: {result.submitted}",
        "",
        "| state | rows |",
        "|---|---|",
        *(f"| {state} | {count} |" for state, count in sorted(result.statuses.items())),
        "",
        f"Report: `{Path(result.report_xlsx).name}`",
    ]
    return "\n".join(lines)
