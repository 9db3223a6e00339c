"""Reconciliation as Prefect tasks: the pay flow's balance snapshot and its last step.

`snapshot_balance` runs when a batch starts paying; `reconcile_batch` re-fetches every payout,
syncs findings, writes the report and publishes the summary as artifacts; `report_batch`, the
pay run's last step, writes the same report and artifacts from the ledger alone.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from payflow.ledger import Ledger
from payflow.ledger.totals import RowOutcome
from payflow.reconcile import PAYING, FailureClasses, options_from, take_snapshot
from payflow.reconcile import reconcile_batch as reconcile_with_service
from payflow.reporting import failures_table, findings_table, summary_markdown, write_batch_report
from payflow.settings import Settings
from payflow.tasks.connections import RunTarget, open_client, open_ledger


@dataclass(frozen=True)
class ReconcileOutcome:
    """What a reconciliation left behind, for the flow's result."""

    batch_id: str
    report_csv: str
    report_xlsx: str
    open_findings: int
    unanswered: int
    corrected: int


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
def reconcile_batch(target: RunTarget, batch_id: str, out_dir: str) -> ReconcileOutcome:
    """Three-way match, findings, roll-forward, the XLSX/CSV report and the artifacts."""
    settings = Settings()
    ledger = open_ledger(target.ledger_url)

    async def run() -> int:
        async with open_client(target, settings) as client:
            result = await reconcile_with_service(client, ledger, batch_id, options_from(settings))
        return result.unanswered

    unanswered = asyncio.run(run())
    return _published(ledger, batch_id, out_dir, target.sandbox, unanswered)


@task(name="report-batch", cache_policy=NO_CACHE)
def report_batch(target: RunTarget, batch_id: str, out_dir: str) -> ReconcileOutcome:
    """The pay run's end: the report and its artifacts from the ledger, where webhooks and polls
    put each final status; re-fetching every payout is the scheduled reconciliation's job."""
    return _published(open_ledger(target.ledger_url), batch_id, out_dir, target.sandbox, 0)


def _published(
    ledger: Ledger, batch_id: str, out_dir: str, sandbox: bool, unanswered: int
) -> ReconcileOutcome:
    """Write the XLSX/CSV report from the ledger and publish its summary as artifacts."""
    classes = FailureClasses.load(Settings().failure_classes_path)
    report = write_batch_report(ledger, batch_id, Path(out_dir), sandbox=sandbox, classes=classes)
    summary = report.summary
    create_markdown_artifact(
        key=artifact_key("reconciliation", batch_id),
        markdown=summary_markdown(summary, report.xlsx.name),
        description="Per-currency counts, rates and balance roll-forward.",
    )
    create_table_artifact(
        key=artifact_key("findings", batch_id),
        table=findings_table(summary),
        description="Open and acknowledged findings.",
    )
    create_table_artifact(
        key=artifact_key("failures", batch_id),
        table=failures_table(summary),
        description="Failed rows by statusMessage, with their next steps.",
    )
    return ReconcileOutcome(
        batch_id,
        str(report.csv),
        str(report.xlsx),
        len(summary.open_findings()),
        unanswered,
        sum(line.count(RowOutcome.CORRECTED) for line in summary.currencies),
    )


@task(name="write-batch-report", cache_policy=NO_CACHE)
def write_batch_report_only(ledger_url: str, batch_id: str, out_dir: str, sandbox: bool) -> str:
    """The report from the ledger alone (no service calls), e.g. when a batch stops before
    paying; returns the XLSX path."""
    settings = Settings()
    classes = FailureClasses.load(settings.failure_classes_path)
    report = write_batch_report(
        open_ledger(ledger_url), batch_id, Path(out_dir), sandbox=sandbox, classes=classes
    )
    return str(report.xlsx)
