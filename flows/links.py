"""The payout-links flow: a links file -> claims for the recipients; later, tracking, reissue
and the report. Every step is a task; the tokens stay in the claims file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from payflow.connections import run_target, serves_sandbox
from payflow.expected import quiet_expected_failures
from payflow.links.batch import LinksReport
from payflow.links.report import LinksFigures
from payflow.links.tracking import RefreshResult
from payflow.settings import Settings
from payflow.tasks.approve_batch import submit_in_flow
from payflow.tasks.links import (
    check_link_service_ids,
    check_links_approval,
    check_links_batch,
    find_expired_claims,
    find_unissued_rows,
    issue_link_claims,
    read_links,
    register_link_rows,
    track_link_payouts,
    write_links_report,
)

Action = Literal["issue", "reissue", "report"]


@dataclass
class LinksResult:
    """What one run of the flow did; figures read from the ledger after the last change."""

    batch_id: str
    action: str
    report_csv: str
    report_xlsx: str
    figures: LinksFigures
    rows: int = 0
    rejected: int = 0
    already_known: int = 0
    known: list[str] = field(default_factory=list)
    claims_issued: int = 0
    claims_file: str | None = None
    refreshed: RefreshResult | None = None
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # how the file's cells were read
    report_error: str = ""  # why the report was not written (its paths then ""), and the fix
    claims_error: str = ""  # why no claims file was written (none issued then), and the fix
    # Why no claim was issued: the batch waits for approval, or was declined (None: it may pay).
    not_issued: str | None = None
    waiting_for_approvals: int = 0


@flow(name="payout-links", persist_result=False, log_prints=False)
def payout_links(
    source: str,
    action: Action = "issue",
    out_dir: str | None = None,
    sheet: str | None = None,
    api_url: str | None = None,
    sandbox: bool = False,
) -> LinksResult:
    """issue: `source` is a links file; reissue and report: `source` is a links batch id. Claims
    are issued (and reissued) only while the ledger says the batch is approved under its terms
    (under the policy's limits: at once)."""
    quiet_expected_failures()
    settings = Settings()
    reports = out_dir or str(settings.reports_dir())
    ledger_url = settings.ledger_url_or_default()
    on_sandbox = serves_sandbox(settings, api_url, sandbox)
    if action == "issue":
        checked = read_links(source, sheet)
        if checked.service_ids:
            # The widget refuses a serviceId that is not a bank-account RUB service: the claim
            # of such a row opened on an error page, and nothing told the operator.
            with run_target(settings, api_url, sandbox) as target:
                checked = check_link_service_ids(target, checked)
        registered = register_link_rows(checked, ledger_url)
        # As a payout batch: its terms recorded as its signed-in maker's (none in a deployed
        # run); no claim URL is written before the ledger says it is approved under them.
        submit_in_flow(ledger_url, checked.batch_id, None)
        approval = check_links_approval(ledger_url, checked.batch_id)
        unissued = find_unissued_rows(ledger_url, checked.batch_id) if approval.may_pay else []
        issued = issue_link_claims(
            ledger_url,
            checked.batch_id,
            unissued,
            reports,
            settings.links_url,
            settings.link_claim_days,
        )
        problems = [*checked.problems, *registered.conflicts]
        written = write_links_report(ledger_url, checked.batch_id, reports, on_sandbox)
        result = LinksResult(
            checked.batch_id,
            action,
            *_report_paths(written),
            written.figures,
            rows=checked.rows,
            rejected=registered.rejected,
            already_known=registered.already_known,
            known=registered.known,
            claims_issued=issued.claims,
            claims_file=issued.path,
            claims_error=issued.error,
            problems=[f"row {p.row}: {p.column}: {p.message}" for p in problems],
            notices=[notice.message for notice in checked.notices],
            report_error=written.error,
            not_issued=None if approval.may_pay else approval.line(),
            waiting_for_approvals=approval.steps_left,
        )
    else:
        check_links_batch(ledger_url, source)
        with run_target(settings, api_url, sandbox) as target:
            refreshed = track_link_payouts(target, source)
        issued = None
        approval = None
        if action == "reissue":
            approval = check_links_approval(ledger_url, source)
            expired = find_expired_claims(ledger_url, source) if approval.may_pay else []
            issued = issue_link_claims(
                ledger_url,
                source,
                expired,
                reports,
                settings.links_url,
                settings.link_claim_days,
            )
        written = write_links_report(ledger_url, source, reports, on_sandbox)
        figures = written.figures
        result = LinksResult(
            source,
            action,
            *_report_paths(written),
            figures,
            # Every row of the file, from the ledger: a report is not told them by an issue run.
            rows=sum(figures.statuses.values()) + figures.rejected,
            rejected=figures.rejected,
            already_known=figures.known,
            claims_issued=issued.claims if issued else 0,
            claims_file=issued.path if issued else None,
            claims_error=issued.error if issued else "",
            refreshed=refreshed,
            report_error=written.error,
            not_issued=None if approval is None or approval.may_pay else approval.line(),
            waiting_for_approvals=approval.steps_left if approval else 0,
        )
    create_markdown_artifact(key="links-summary", markdown=summary_markdown(result))
    return result


def _report_paths(written: LinksReport) -> tuple[str, str]:
    """The report's CSV and XLSX paths, or empty ones when it could not be written."""
    if written.paths is None:
        return "", ""
    return str(written.paths.csv), str(written.paths.xlsx)


def summary_markdown(result: LinksResult) -> str:
    """The run's summary for the Prefect UI: counts and file names, never a URL or token."""
    lines = [
        f"## Payout links {result.batch_id} ({result.action})",
        "",
        f"Rows: {result.rows}, rejected: {result.rejected}, claims issued: {result.claims_issued}",
        "",
        "| claim | rows |",
        "|---|---|",
        *(f"| {state} | {count} |" for state, count in sorted(result.figures.claims.items())),
        *(["", f"**No claim issued:** {result.not_issued}"] if result.not_issued else []),
        *(["", f"**No claims file:** {result.claims_error}"] if result.claims_error else []),
    ]
    return "\n".join(lines)
