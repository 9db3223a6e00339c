"""Reconciliation as Prefect tasks: the pay flow's balance snapshot and its last step.

`snapshot_balance` runs when a batch starts paying; `reconcile_batch` re-fetches every payout,
syncs findings, writes the report and publishes the summary as artifacts; `report_batch`, the
pay run's last step, writes the same report and artifacts from the ledger alone.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from payflow.acts.actor import Actor
from payflow.acts.history import batch_history, history_markdown
from payflow.acts.reconcile import reconcile
from payflow.ledger import Ledger
from payflow.ledger.totals import RowOutcome
from payflow.notices import findings_opened
from payflow.notify import tell
from payflow.opening import why_not_written
from payflow.progress_line import reconcile_progress
from payflow.reconcile import PAYING, FailureClasses, options_from, take_snapshot
from payflow.reconcile.attention import unfinished
from payflow.reporting import failures_table, findings_table, summary_markdown, write_batch_report
from payflow.reporting.summary import Summary, build_summary
from payflow.settings import Settings
from payflow.shown import shown
from payflow.storage import place_name
from payflow.tasks.connections import RunTarget, open_client, open_ledger
from payflow.wording import report_not_written


@dataclass(frozen=True)
class ReconcileOutcome:
    """What a reconciliation left behind, for the flow's result."""

    batch_id: str
    report_csv: str
    report_xlsx: str
    open_findings: int
    unanswered: int
    corrected: int
    # Set when the report could not be written (a full disk): the one line saying why and how
    # to write it; the run still ends with its figures from the ledger, exit 1, never 2.
    report_error: str = ""
    unsent: int = 0  # rows VALIDATED or SUBMITTING after it
    unconfirmed: int = 0  # payouts CREATED or PROCESSING after it


def artifact_key(prefix: str, batch_id: str) -> str:
    """A Prefect artifact key (lowercase letters, digits, dashes) naming the batch."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{prefix}-{batch_id}".lower()).strip("-")


@task(name="snapshot-balance", cache_policy=NO_CACHE)
def snapshot_balance(target: RunTarget, batch_id: str) -> None:
    """Store the merchant balance as the batch starts paying (the roll-forward's start)."""
    ledger = open_ledger(target.ledger_url)

    async def run() -> None:
        async with open_client(target) as client:
            await take_snapshot(client, ledger, batch_id, PAYING)

    asyncio.run(run())


@task(name="reconcile-batch", cache_policy=NO_CACHE)
def reconcile_batch(target: RunTarget, batch_id: str, out_dir: str, by: Actor) -> ReconcileOutcome:
    """Three-way match, findings, roll-forward, the XLSX/CSV report and the artifacts, as `by`'s
    unattended act (a deployment's: `payflow.acts.reconcile.scheduled`)."""
    settings = Settings()
    ledger = open_ledger(target.ledger_url)

    options = options_from(settings)
    progress = reconcile_progress(batch_id, get_run_logger().info)

    async def run() -> tuple[int, int]:
        async with open_client(target, settings, max_in_flight=options.concurrency) as client:
            result = await reconcile(client, ledger, batch_id, by, options, progress)
        return result.unanswered, result.findings.opened + result.findings.reopened

    unanswered, opened = asyncio.run(run())
    return _published(ledger, batch_id, out_dir, target.sandbox, unanswered, opened, by.name)


@task(name="report-batch", cache_policy=NO_CACHE)
def report_batch(target: RunTarget, batch_id: str, out_dir: str) -> ReconcileOutcome:
    """The pay run's end: the report and its artifacts from the ledger, where webhooks and polls
    put each final status; re-fetching every payout is the scheduled reconciliation's job."""
    return _published(open_ledger(target.ledger_url), batch_id, out_dir, target.sandbox, 0, 0)


def _published(
    ledger: Ledger,
    batch_id: str,
    out_dir: str,
    sandbox: bool,
    unanswered: int,
    opened: int,
    made_by: str = "payflow",
) -> ReconcileOutcome:
    """Write the XLSX/CSV report from the ledger and publish its summary as artifacts; tell
    people of the `opened` findings."""
    settings = Settings()
    classes = FailureClasses.load(settings.failure_classes_path)
    left = unfinished(ledger.batch_counts(batch_id).by_state)
    try:
        report = write_batch_report(
            ledger, batch_id, out_dir, sandbox=sandbox, classes=classes, made_by=made_by
        )
    except OSError as exc:
        # After money moved: the figures are in the ledger, the report can be written later.
        command = f"payflow reconcile {batch_id} --out DIR"
        why = report_not_written(out_dir, why_not_written(exc), command)
        get_run_logger().warning(why)
        summary = build_summary(ledger, batch_id, classes, sandbox=sandbox)
        if opened:
            open_now = len(summary.open_findings())
            tell(settings, lambda: findings_opened(batch_id, opened, open_now))
        return ReconcileOutcome(
            batch_id,
            "",
            "",
            len(summary.open_findings()),
            unanswered,
            corrected_count(summary),
            report_error=why,
            unsent=left.unsent,
            unconfirmed=left.unconfirmed,
        )
    summary = report.summary
    # Prefect's view of the report, best effort: the report itself is written already.
    shown(
        "the reconciliation artifacts",
        lambda: (
            create_markdown_artifact(
                key=artifact_key("reconciliation", batch_id),
                markdown=summary_markdown(summary, place_name(report.xlsx)),
                description="Per-currency counts, rates and balance roll-forward.",
            ),
            create_table_artifact(
                key=artifact_key("findings", batch_id),
                table=findings_table(summary),
                description="Open and acknowledged findings.",
            ),
            create_table_artifact(
                key=artifact_key("failures", batch_id),
                table=failures_table(summary),
                description="Failed rows by statusMessage, with their next steps.",
            ),
        ),
    )
    create_markdown_artifact(
        key=artifact_key("history", batch_id),
        markdown=history_markdown(batch_history(ledger, batch_id)),
        description="Who did what to the batch, and where: the console and "
        "`payflow status --history` show the same.",
    )
    if opened:
        open_now = len(summary.open_findings())
        tell(settings, lambda: findings_opened(batch_id, opened, open_now))
    return ReconcileOutcome(
        batch_id,
        str(report.csv),
        str(report.xlsx),
        len(summary.open_findings()),
        unanswered,
        corrected_count(summary),
        unsent=left.unsent,
        unconfirmed=left.unconfirmed,
    )


def corrected_count(summary: Summary) -> int:
    """Payouts the platform corrected after completion, from the summary's per-currency lines."""
    return sum(line.count(RowOutcome.CORRECTED) for line in summary.currencies)


@task(name="write-batch-report", cache_policy=NO_CACHE)
def write_batch_report_only(ledger_url: str, batch_id: str, out_dir: str, sandbox: bool) -> str:
    """The report from the ledger alone (no service calls), e.g. when a batch stops before
    paying; returns the XLSX path."""
    settings = Settings()
    classes = FailureClasses.load(settings.failure_classes_path)
    report = write_batch_report(
        open_ledger(ledger_url), batch_id, out_dir, sandbox=sandbox, classes=classes
    )
    return str(report.xlsx)
