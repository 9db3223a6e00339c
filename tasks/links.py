"""Prefect tasks of the payout-links flow: glue over `payflow.links`.

No task returns a claim token or a signed link: claims are written to their file inside the
task that issues them, and only the file's path and a count leave it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.intake.lookups import ServiceInfo, fetch_services
from payflow.links.approval import LinksApproval, links_approval
from payflow.links.batch import (
    ClaimsFile,
    LinksReport,
    RegisteredLinks,
    expired_unused,
    issue_claims_file,
    never_issued,
    register_links,
    report_or_figures,
    require_links_batch,
)
from payflow.links.records import LinkRow, LinkView
from payflow.links.rows import LinkRowsReport, check_link_services, read_link_rows
from payflow.links.store import LinkStore
from payflow.links.tracking import RefreshResult, refresh_links
from payflow.tasks.connections import RunTarget, open_client, open_ledger


def open_link_store(ledger_url: str) -> LinkStore:
    """The link rows of the process's one ledger for `ledger_url`."""
    return LinkStore(open_ledger(ledger_url).engine)


@task(name="read-link-rows", cache_policy=NO_CACHE)
def read_links(path: str, sheet: str | None = None) -> LinkRowsReport:
    """Read a links file and check every row by the widget's rules."""
    return read_link_rows(path, sheet)


@task(name="check-link-services", cache_policy=NO_CACHE)
def check_link_service_ids(target: RunTarget, report: LinkRowsReport) -> LinkRowsReport:
    """Reject the rows whose serviceId the widget would refuse, by the API's services list."""

    async def services() -> list[ServiceInfo]:
        async with open_client(target) as client:
            return await fetch_services(client)

    check_link_services(report, asyncio.run(services()))
    return report


@task(name="register-link-rows", cache_policy=NO_CACHE)
def register_link_rows(report: LinkRowsReport, ledger_url: str) -> RegisteredLinks:
    """Record the valid rows as payouts the recipients will create; conflicts are rejected."""
    return register_links(open_link_store(ledger_url), report)


@task(name="issue-link-claims", cache_policy=NO_CACHE)
def issue_link_claims(
    ledger_url: str,
    batch_id: str,
    rows: list[LinkRow] | list[LinkView],
    out_dir: str,
    base_url: str,
    days: float,
) -> ClaimsFile:
    """Issue a claim per row into a new owner-only file; returns its path and count only."""
    store = open_link_store(ledger_url)
    return issue_claims_file(
        store, batch_id, rows, out_dir=Path(out_dir), base_url=base_url, days=days
    )


@task(name="check-links-approval", cache_policy=NO_CACHE)
def check_links_approval(ledger_url: str, batch_id: str) -> LinksApproval:
    """The batch's approval under its recorded terms (from the ledger, never this worker's
    environment): no claim is issued before it is approved."""
    return links_approval(open_ledger(ledger_url), batch_id)


@task(name="find-unissued-rows", cache_policy=NO_CACHE)
def find_unissued_rows(ledger_url: str, batch_id: str) -> list[LinkView]:
    """The batch's rows that never had a claim (it waited for approval)."""
    return never_issued(open_link_store(ledger_url), batch_id)


@task(name="check-links-batch", cache_policy=NO_CACHE)
def check_links_batch(ledger_url: str, batch_id: str) -> None:
    """Stop (one line) unless the batch is a links batch in the ledger."""
    require_links_batch(open_link_store(ledger_url), batch_id)


@task(name="find-expired-claims", cache_policy=NO_CACHE)
def find_expired_claims(ledger_url: str, batch_id: str) -> list[LinkView]:
    """Rows whose claims all expired with no payout."""
    return expired_unused(open_link_store(ledger_url), batch_id)


@task(name="track-link-payouts", cache_policy=NO_CACHE)
def track_link_payouts(target: RunTarget, batch_id: str) -> RefreshResult:
    """Look up the batch's opened and unfinished rows by externalId."""

    async def refresh() -> RefreshResult:
        async with open_client(target) as client:
            return await refresh_links(client, open_link_store(target.ledger_url), batch_id)

    return asyncio.run(refresh())


@task(name="write-links-report", cache_policy=NO_CACHE)
def write_links_report(ledger_url: str, batch_id: str, out_dir: str, sandbox: bool) -> LinksReport:
    """The links report from the ledger: claims used, open, expired unused; payout statuses;
    the rows the file had rejected; the sandbox note when the embedded sandbox served. A full
    disk leaves no file and says so (`LinksReport.error`): payouts may have moved."""
    return report_or_figures(open_link_store(ledger_url), batch_id, Path(out_dir), sandbox=sandbox)
