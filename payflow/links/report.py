"""The links report: per row, whether its claim produced a payout and that payout's status, or
expired unused. CSV and XLSX from the ledger; every cell from input made inert (`payflow.inert`).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from openpyxl import Workbook

from payflow.atomic import save_workbook
from payflow.inert import inert_row, text_cells
from payflow.intake import Problem
from payflow.intake.reading import FIRST_DATA_ROW
from payflow.ledger.states import NOT_PAID_STATES, RowState
from payflow.links.records import CURRENCY, ClaimState, LinkView, status_label
from payflow.reporting.headings import column_widths, header_row
from payflow.reporting.money import money_cell, money_text
from payflow.reporting.printing import lines_needed, print_one_page_wide
from payflow.reporting.workbook import NO_REAL_MONEY_NOTE, append_tall
from payflow.storage import Place, Storage, storage_at

HEADER = (
    "row",
    "externalId",
    "userId",
    "amount",
    "currency",
    "claim",
    "claimsIssued",
    "claimsOpened",
    "linksMinted",
    "lastClaimExpiresAt",
    "payoutId",
    "status",
    "statusMessage",
    "corrected",
    "linkBatch",
)
PROBLEM_HEADER = ("row", "externalId", "column", "rule", "message")
# Wide enough for ids and messages: Excel's default width cut them short.
LINK_WIDTHS = (6, 28, 20, 14, 9, 16, 13, 14, 12, 26, 38, 12, 40, 10, 22)
PROBLEM_WIDTHS = (6, 28, 12, 24, 80)
NUMBERS = ("row", "amount", "claimsIssued", "claimsOpened", "linksMinted")
# A payout's statusMessage and a rejected row's message are sentences: wrapped in their columns
# (they ran under the next column and off the printed page).
MESSAGE_AT, PROBLEM_MESSAGE_AT = HEADER.index("statusMessage"), PROBLEM_HEADER.index("message")


@dataclass(frozen=True)
class LinksReportPaths:
    """Where one links report was written."""

    csv: Place  # a local path, or a remote object's URL (payflow.storage)
    xlsx: Place


@dataclass(frozen=True)
class LinksFigures:
    """What a links report says in figures, read from the ledger: rows per claim state, rows per
    payout state (VALIDATED: no payout yet), a line per payout that ended unpaid (rows known from
    an earlier batch included: they are rows of this file too), the rows of the file that got no
    link, and those known from an earlier batch."""

    claims: dict[str, int]
    statuses: dict[str, int]
    unpaid: list[str]
    rejected: int = 0
    known: int = 0

    @property
    def all_paid(self) -> bool:
        """Every row's payout is COMPLETED (an empty batch is not "all paid")."""
        return bool(self.statuses) and set(self.statuses) == {RowState.COMPLETED.value}


def rejected_rows(problems: Iterable[Problem]) -> int:
    """Rows with at least one problem (a problem of the whole file, on its header, is no row)."""
    return len({p.row for p in problems if p.row >= FIRST_DATA_ROW})


def links_figures(
    views: Sequence[LinkView],
    rejects: Sequence[Problem],
    now: datetime,
    known: Sequence[LinkView] = (),
) -> LinksFigures:
    """The figures of `views`, `known` (rows whose link is an earlier batch's) and `rejects`,
    unpaid rows in row order with their statusMessage."""
    views = [*views, *known]
    unpaid = [
        f"row {view.row_number}: externalId {view.external_id!r}: {view.state.value}"
        + (" (corrected after COMPLETED)" if view.corrected else "")
        + (f": {view.status_message}" if view.status_message else "")
        for view in sorted(views, key=lambda view: view.row_number)
        if view.state in NOT_PAID_STATES
    ]
    return LinksFigures(
        claim_counts(views, now),
        status_counts(views),
        unpaid,
        rejected_rows(rejects),
        len(known),
    )


def claim_counts(views: Sequence[LinkView], now: datetime) -> dict[str, int]:
    """Rows per claim state (USED, OPEN, OPENED, EXPIRED_UNUSED)."""
    return dict(Counter(view.claim_state(now).value for view in views))


def status_counts(views: Sequence[LinkView]) -> dict[str, int]:
    """Rows per ledger state (VALIDATED: no payout yet)."""
    return dict(Counter(view.state.value for view in views))


def status_amounts(views: Sequence[LinkView]) -> dict[str, Decimal]:
    """The amounts of the rows in each ledger state, from the ledger."""
    totals: dict[str, Decimal] = {}
    for view in views:
        totals[view.state.value] = totals.get(view.state.value, Decimal(0)) + view.amount
    return totals


def _cells(view: LinkView, now: datetime, batch_id: str) -> list[object]:
    state = view.claim_state(now)
    return [
        view.row_number,
        view.external_id,
        view.user_id,
        money_text(view.amount, CURRENCY),
        CURRENCY,
        state.value,
        view.claims,
        view.claims_opened,
        view.links_minted,
        view.last_expires_at.isoformat(timespec="seconds") if view.last_expires_at else "",
        view.payout_id,
        "" if state is not ClaimState.USED else view.state.value,
        view.status_message,
        "yes" if view.corrected else "",
        # A row known from an earlier batch: its claim is in that batch's claims file.
        view.batch_id if view.batch_id != batch_id else "",
    ]


def _problem_cells(problem: Problem) -> list[object]:
    return [
        problem.row,
        problem.external_id,
        problem.column,
        problem.rule,
        problem.message,
    ]


def _rejected_lines(problems: Sequence[Problem]) -> list[list[object]]:
    """One line per rejected row: claim REJECTED, the reasons where the status message goes."""
    reasons: dict[int, list[str]] = {}
    external_ids: dict[int, str] = {}
    for problem in problems:
        reasons.setdefault(problem.row, []).append(f"{problem.column}: {problem.message}")
        external_ids.setdefault(problem.row, problem.external_id)
    return [
        [
            row,
            external_ids[row],
            "",
            "",
            "",
            "REJECTED",
            *[""] * 6,
            "; ".join(found),
            "",
            "",
        ]
        for row, found in sorted(reasons.items())
    ]


def write_links_report(
    out_dir: Storage | Path | str,
    batch_id: str,
    views: Sequence[LinkView],
    now: datetime,
    problems: Sequence[Problem] = (),
    known: Sequence[LinkView] = (),
    *,
    sandbox: bool,
) -> LinksReportPaths:
    """Write `<batch>-links.csv` and `.xlsx` (with a Rejected sheet when rows were rejected);
    a row `known` from an earlier batch shows that batch's link and payout, named in linkBatch.
    `sandbox`: the embedded sandbox served, and the summary says no real money moved."""
    storage = storage_at(out_dir)
    names = (f"{batch_id}-links.csv", f"{batch_id}-links.xlsx")
    views = sorted([*views, *known], key=lambda view: view.row_number)
    rows = [_cells(view, now, batch_id) for view in views]
    with storage.writing(*names) as (csv_part, xlsx_part):
        with csv_part.open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            writer.writerows(inert_row(cells) for cells in rows)
            writer.writerows(inert_row(cells) for cells in _rejected_lines(problems))
        workbook = _workbook(views, rows, problems, len(known), now, sandbox=sandbox)
        save_workbook(workbook, xlsx_part)
    return LinksReportPaths(storage.place(names[0]), storage.place(names[1]))


def _workbook(
    views: list[LinkView],
    rows: list[list[object]],
    problems: Sequence[Problem],
    known: int,
    now: datetime,
    *,
    sandbox: bool,
) -> Workbook:
    """The links report's workbook: Links, Summary and (when rows were rejected) Rejected."""
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("Links")
    header_row(sheet, HEADER, LINK_WIDTHS, NUMBERS)
    amount_at = HEADER.index("amount")
    for number, (view, cells) in enumerate(zip(views, rows, strict=True), start=2):
        # A number in the workbook, so a spreadsheet sums it; the CSV keeps its text.
        amount = money_cell(sheet, view.amount, CURRENCY)
        line = text_cells(sheet, [*cells[:amount_at], amount, *cells[amount_at + 1 :]])
        lines = lines_needed(str(cells[MESSAGE_AT] or ""), LINK_WIDTHS[MESSAGE_AT])
        append_tall(sheet, number, line, lines)
    counts = workbook.create_sheet("Summary")
    # Column B is as wide as the sandbox note it may hold.
    column_widths(counts, (28, len(NO_REAL_MONEY_NOTE) + 2, 18))
    print_one_page_wide(counts, header_rows=0)
    if sandbox:
        counts.append(["note", NO_REAL_MONEY_NOTE])
        counts.append([])
    counts.append(["claim", "rows"])
    for state, count in sorted(claim_counts(views, now).items()):
        counts.append([state, count])
    counts.append([])
    # The amounts too, in the currency of every link: a finance reader's first question is how
    # much was paid and how much was not.
    counts.append(["status", "rows", f"amount {CURRENCY}"])
    amounts = status_amounts(views)
    for state, count in sorted(status_counts(views).items()):
        counts.append([status_label(state), count, money_cell(counts, amounts[state], CURRENCY)])
    counts.append([])
    counts.append(["rejected in the file", rejected_rows(problems)])
    counts.append(["known from an earlier batch", known])
    if problems:
        rejected = workbook.create_sheet("Rejected")
        header_row(rejected, PROBLEM_HEADER, PROBLEM_WIDTHS, ("row",))
        width = PROBLEM_WIDTHS[PROBLEM_MESSAGE_AT]
        for number, problem in enumerate(problems, start=2):
            lines = lines_needed(problem.message, width)
            append_tall(rejected, number, text_cells(rejected, _problem_cells(problem)), lines)
    return workbook
