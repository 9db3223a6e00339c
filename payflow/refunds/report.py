"""The reconciliation report of a refund batch: one line per source row, a summary per currency.

Same look and safety as the payout report: CSV and XLSX, every cell from input or the service
made inert against formula injection (`payflow.inert`), amounts as exact text, the sandbox note
when no real money moved. A refund carries no personal data and the token never reaches a report.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from openpyxl import Workbook

from payflow.atomic import save_workbook
from payflow.inert import inert_row, text_cell, text_cells
from payflow.ledger import Disposition, RefundRowView
from payflow.ledger.states import NOT_PAID_STATES
from payflow.reporting.headings import column_widths, header_row
from payflow.reporting.money import money_cell, money_text
from payflow.reporting.printing import lines_needed, print_one_page_wide
from payflow.reporting.reconciliation import ReportPaths
from payflow.reporting.workbook import NO_REAL_MONEY_NOTE, append_tall
from payflow.storage import Storage, storage_at

HEADER = [
    "row",
    "orderId",
    "externalId",
    "refundId",
    "amount",
    "currency",
    "debitAmount",
    "debitCurrency",
    "debitBasis",
    "status",
    "statusMessage",
    "orderStatus",
    "findings",
]
AMOUNT_AT, DEBIT_AT = HEADER.index("amount"), HEADER.index("debitAmount")
# Wide enough for a UUID, an id and a finding: Excel's default width cut every id short.
ROW_WIDTHS = (6, 38, 32, 38, 14, 9, 14, 13, 19, 16, 40, 12, 70)
SUMMARY_WIDTHS = (18, 26, 8, 18)
# A refused row's reasons (findings) and a service's message ran under the next column and off
# the printed page: wrapped in their columns, on a line tall enough.
WRAPPED = {at: ROW_WIDTHS[at] for at in (HEADER.index("statusMessage"), HEADER.index("findings"))}

# The spec's refunds never carry a statusMessage: a failed one is said to have no reason.
NO_REFUND_REASON = "the service gives no reason (statusMessage is always null)"


def not_refunded(views: Iterable[RefundRowView]) -> list[RefundRowView]:
    """The rows not refunded: refused before sending (the checks, or an externalId used for
    other content), refused by the service, or failed."""
    return [view for view in views if view.reasons or view.state in NOT_PAID_STATES]


def why_not_refunded(view: RefundRowView) -> str:
    """Why a row of `not_refunded` was not: its reasons, or the service's statusMessage (the
    service never says why a refund failed)."""
    if view.reasons:
        return "; ".join(view.reasons)
    return view.status_message or NO_REFUND_REASON


@dataclass(frozen=True, slots=True)
class RefundReportLine:
    """One row of the report: text as the input or the service gave it (each file guards it)."""

    cells: list[object]
    currency: str
    state: str
    amount: Decimal | None
    debit_amount: Decimal | None = None
    debit_currency: str | None = None


def findings(view: RefundRowView) -> str:
    """What an operator should know about the row beyond its status."""
    notes = list(view.reasons)
    if view.disposition == Disposition.ALREADY_KNOWN:
        notes.append(
            "already in the ledger"
            + (f" (batch {view.first_batch_id})" if view.first_batch_id else "")
            + ": not refunded again"
        )
    if view.corrected:
        notes.append("final status corrected by the platform")
    if view.state.value == "COMPLETED" and view.order_status != "REFUND":
        notes.append("order not yet seen in status REFUND")
    if view.state.value in ("PENDING", "MANUAL", "SUBMITTING", "VALIDATED"):
        notes.append("not final at the deadline: follow it up")
    if view.state.value in ("FAILED", "CANCELED"):
        # A canceled refund is not refunded either: its cell read empty, like a completed one.
        notes.append(f"refund {view.state.value.lower()}; {NO_REFUND_REASON}")
    return "; ".join(notes)


def report_line(view: RefundRowView) -> RefundReportLine:
    """The report cells of one source row."""

    cells: list[object] = [
        view.row_number,
        view.order_id,
        view.external_id,
        view.refund_id,
        money_text(view.amount, view.currency),
        view.currency,
        money_text(view.debit_amount, view.debit_currency),
        view.debit_currency,
        view.debit_basis,
        view.state.value,
        view.status_message,
        view.order_status,
        findings(view),
    ]
    return RefundReportLine(
        cells, view.currency or "", view.state.value, view.amount, view.debit_amount,
        view.debit_currency,
    )  # fmt: skip


@dataclass(frozen=True)
class RefundReport:
    """The refund report's files, or None with the one line saying why they were not written
    and the command that writes them."""

    paths: ReportPaths | None
    error: str = ""


def write_refund_report(
    out_dir: Storage | Path | str,
    batch_id: str,
    views: Iterable[RefundRowView],
    *,
    sandbox: bool,
) -> ReportPaths:
    """Write `<batch_id>-refunds.csv` and `.xlsx` into `out_dir` (a folder or a storage URL)
    and return their places."""
    storage = storage_at(out_dir)
    lines = [report_line(view) for view in views]
    names = (f"{batch_id}-refunds.csv", f"{batch_id}-refunds.xlsx")
    with storage.writing(*names) as (csv_part, xlsx_part):
        _write_csv(csv_part, lines)
        _write_xlsx(xlsx_part, batch_id, lines, sandbox)
    return ReportPaths(csv=storage.place(names[0]), xlsx=storage.place(names[1]))


def _write_csv(part: Path, lines: list[RefundReportLine]) -> None:
    with part.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(inert_row(line.cells) for line in lines)


def _write_xlsx(part: Path, batch_id: str, lines: list[RefundReportLine], sandbox: bool) -> None:
    counts: dict[str, int] = defaultdict(int)
    totals: dict[tuple[str, str], tuple[int, Decimal]] = defaultdict(lambda: (0, Decimal(0)))
    for line in lines:
        counts[line.state] += 1
        if line.amount is not None:
            count, amount = totals[(line.currency, line.state)]
            totals[(line.currency, line.state)] = (count + 1, amount + line.amount)
    workbook = Workbook(write_only=True)
    summary = workbook.create_sheet("Summary")
    column_widths(summary, SUMMARY_WIDTHS)
    print_one_page_wide(summary, header_rows=0)
    summary.append(["refund batch", batch_id])
    summary.append(["generated_at_utc", datetime.now(UTC).isoformat(timespec="seconds")])
    if sandbox:
        summary.append(["note", NO_REAL_MONEY_NOTE])
    summary.append([])
    summary.append(["status", "rows"])
    for state, count in sorted(counts.items()):
        summary.append([state, count])
    summary.append([])
    summary.append(["currency", "status", "rows", "amount"])
    for (currency, state), (count, amount) in sorted(totals.items()):
        summary.append(
            [text_cell(summary, currency), state, count, money_cell(summary, amount, currency)]
        )
    sheet = workbook.create_sheet("Rows")
    header_row(sheet, HEADER, ROW_WIDTHS, ("row", "amount", "debitAmount"))
    for number, line in enumerate(lines, start=2):
        cells: list[object] = list(line.cells)
        # Numbers in the workbook, so a spreadsheet sums them; the CSV keeps their text.
        cells[AMOUNT_AT] = money_cell(sheet, line.amount, line.currency)
        cells[DEBIT_AT] = money_cell(sheet, line.debit_amount, line.debit_currency)
        tall = max(lines_needed(str(cells[at] or ""), width) for at, width in WRAPPED.items())
        append_tall(sheet, number, text_cells(sheet, cells), tall)
    save_workbook(workbook, part)
