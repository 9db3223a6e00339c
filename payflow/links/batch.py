"""The links jobs as plain functions (the flow's tasks and the tests call these):
issue claims for a file, reissue expired unused claims of a batch, write the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from payflow.intake import BatchFileError, Problem
from payflow.ledger.states import RowState
from payflow.links.files import write_claims_file
from payflow.links.records import ClaimState, LinkRow, LinkView
from payflow.links.report import (
    LinksFigures,
    LinksReportPaths,
    links_figures,
    write_links_report,
)
from payflow.links.rows import LinkRowsReport
from payflow.links.store import CONFLICT_COLUMN, CONFLICT_RULE, LinkStore
from payflow.opening import why_not_written
from payflow.wording import claims_not_written, report_not_written


@dataclass(frozen=True)
class ClaimsFile:
    """Where fresh claim URLs were written, and how many; never the URLs themselves."""

    path: str | None
    claims: int
    error: str = ""  # why no file was written (none issued then), and the command that writes it


@dataclass
class RegisteredLinks:
    """What registering a links file decided (rows, not tokens)."""

    batch_id: str
    rows: int
    rejected: int
    new: list[LinkRow] = field(default_factory=list)
    already_known: int = 0
    # "row 3: externalId 'x' has a link from links batch ... (row 3)": none is issued again.
    known: list[str] = field(default_factory=list)
    conflicts: list[Problem] = field(default_factory=list)


def register_links(store: LinkStore, report: LinkRowsReport) -> RegisteredLinks:
    """Register the valid rows, and the file's problems and the conflicts as the batch's rejects;
    conflicts become problems of their rows."""
    outcome = store.register(report.batch_id, report.source_name, report.valid, report.problems)
    conflicts = [
        Problem(row.row_number, CONFLICT_COLUMN, CONFLICT_RULE, reason, row.external_id)
        for row, reason in outcome.conflicts
    ]
    return RegisteredLinks(
        batch_id=report.batch_id,
        rows=report.rows,
        rejected=report.rejected + len(conflicts),
        new=outcome.new,
        already_known=len(outcome.already_known),
        known=[known_line(row, first, state) for row, first, state in outcome.already_known],
        conflicts=conflicts,
    )


def known_line(row: LinkRow, first: str, state: RowState) -> str:
    """What the operator reads of a row whose link an earlier file registered, by its payout's
    state in the ledger: a paid one was read as a claim still to send from that batch's file."""
    if state is RowState.VALIDATED:
        where = "its claim is in that batch's claims file"
    elif state is RowState.COMPLETED:
        where = "already paid (its payout is COMPLETED)"
    else:
        where = f"its recipient has made its payout, {state.value}"
    return (
        f"row {row.row_number}: externalId {row.external_id!r} has a link from {first}: "
        f"{where}; none issued again"
    )


def issue_claims_file(
    store: LinkStore,
    batch_id: str,
    rows: Sequence[LinkRow | LinkView],
    *,
    out_dir: Path,
    base_url: str,
    days: float,
) -> ClaimsFile:
    """Issue one claim per row into a new 0600 file; nothing when no rows.

    The claims go live only once their file is whole: a claim stored with no file (a full disk)
    held its row's URL nowhere, and `--reissue` covers only rows with no live claim, so the
    recipient waited for its expiry. Unwritten, they stay unissued and `--reissue` writes them."""
    if not rows:
        return ClaimsFile(None, 0)
    claims = store.new_claims(rows, days)
    try:
        path = write_claims_file(out_dir, batch_id, claims, base_url, store.now())
    except OSError as exc:
        command = f"payflow links --reissue {batch_id} --out DIR"
        return ClaimsFile(None, 0, claims_not_written(out_dir, why_not_written(exc), command))
    try:
        store.store_claims(claims)
    except BaseException:
        path.unlink(missing_ok=True)  # URLs that open nothing must not reach a recipient
        raise
    return ClaimsFile(str(path), len(claims))


def require_links_batch(store: LinkStore, batch_id: str) -> None:
    """BatchFileError (one line) unless `batch_id` is a links batch in the ledger: a report of
    an unknown id wrote an empty report and read as a batch with nothing paid."""
    if not store.batch_exists(batch_id):
        raise BatchFileError(f"no links batch {batch_id} in the ledger")


def expired_unused(store: LinkStore, batch_id: str) -> list[LinkView]:
    """Rows of the batch whose every claim expired with no payout: those a reissue covers."""
    require_links_batch(store, batch_id)
    now = store.now()
    return [v for v in store.rows(batch_id) if v.claim_state(now) is ClaimState.EXPIRED_UNUSED]


@dataclass(frozen=True)
class LinksReport:
    """The report's files (None: not written) and its figures, read from the ledger either way;
    `error`: the one line saying why it was not written and the command that writes it."""

    paths: LinksReportPaths | None
    figures: LinksFigures
    error: str = ""


def never_issued(store: LinkStore, batch_id: str) -> list[LinkView]:
    """Rows of the batch with no payout that never had a claim: a batch that waited for its
    approval, or the same file again (a row issued before is in the earlier claims file)."""
    return [v for v in store.rows(batch_id) if v.state is RowState.VALIDATED and not v.claims]


def report_links(
    store: LinkStore, batch_id: str, out_dir: Path | str, *, sandbox: bool
) -> tuple[LinksReportPaths, LinksFigures]:
    """Write the links report from the ledger, rejected rows included (whichever run writes it;
    `sandbox`: the embedded sandbox served); returns its paths and its figures."""
    views = store.rows(batch_id)
    known = store.known(batch_id)
    rejects = store.rejects(batch_id)
    now = store.now()
    paths = write_links_report(out_dir, batch_id, views, now, rejects, known, sandbox=sandbox)
    return paths, links_figures(views, rejects, now, known)


def report_or_figures(
    store: LinkStore, batch_id: str, out_dir: Path, *, sandbox: bool
) -> LinksReport:
    """`report_links`, or when the report cannot be written (a full disk) its figures from the
    ledger and the one line saying why and what writes it: recipients may have been paid."""
    try:
        paths, figures = report_links(store, batch_id, out_dir, sandbox=sandbox)
    except OSError as exc:
        views, known, rejects = store.rows(batch_id), store.known(batch_id), store.rejects(batch_id)
        figures = links_figures(views, rejects, store.now(), known)
        command = f"payflow links report {batch_id} --out DIR"
        return LinksReport(
            None, figures, report_not_written(out_dir, why_not_written(exc), command)
        )
    return LinksReport(paths, figures)
