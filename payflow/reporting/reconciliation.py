"""Write the reconciliation report of a batch: one line per source row, plus totals.

Requisites arrive here already masked (invariant 6); the writer never sees a full number.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from openpyxl import Workbook

from payflow.model import display_amount
from payflow.reporting.inert import inert_row, text_cells

NO_REAL_MONEY_NOTE = "Embedded sandbox: no real money moved."


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One source row of the batch and what became of it."""

    row: int
    external_id: str
    state: str
    amount: Decimal | None
    currency: str
    payment_type: str
    requisites_masked: str
    payout_id: str
    status_message: str
    corrected: bool
    detail: str  # rejects' reasons, conflicts' differences, "already paid by batch X" and so on


@dataclass(frozen=True, slots=True)
class ReportPaths:
    """Where the two renderings of one report were written."""

    csv: Path
    xlsx: Path


HEADER = [f.name for f in fields(ReportRow)]


def _cells(row: ReportRow) -> list[str | int]:
    amount = "" if row.amount is None else display_amount(row.amount)
    return [
        row.row,
        row.external_id,
        row.state,
        amount,
        row.currency,
        row.payment_type,
        row.requisites_masked,
        row.payout_id,
        row.status_message,
        "yes" if row.corrected else "",
        row.detail,
    ]


def _totals(rows: list[ReportRow]) -> dict[tuple[str, str], tuple[int, Decimal]]:
    totals: dict[tuple[str, str], tuple[int, Decimal]] = defaultdict(lambda: (0, Decimal(0)))
    for row in rows:
        if row.amount is None:
            continue
        count, amount = totals[(row.currency, row.state)]
        totals[(row.currency, row.state)] = (count + 1, amount + row.amount)
    return dict(sorted(totals.items()))


def write_reconciliation(
    out_dir: Path,
    batch_id: str,
    rows: Iterable[ReportRow],
    counts: Mapping[str, int],
    *,
    sandbox: bool,
) -> ReportPaths:
    """Write `<batch_id>-reconciliation.csv` and `.xlsx` into `out_dir` and return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    materialised = sorted(rows, key=lambda r: r.row)
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    paths = ReportPaths(
        csv=out_dir / f"{batch_id}-reconciliation.csv",
        xlsx=out_dir / f"{batch_id}-reconciliation.xlsx",
    )
    with paths.csv.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(inert_row(_cells(row)) for row in materialised)

    workbook = Workbook(write_only=True)
    summary = workbook.create_sheet("Summary")
    summary.append(["batch_id", batch_id])
    summary.append(["generated_at_utc", generated])
    if sandbox:
        summary.append(["note", NO_REAL_MONEY_NOTE])
    summary.append([])
    summary.append(["state", "rows"])
    for state, count in sorted(counts.items()):
        summary.append(text_cells(summary, [state, count]))
    summary.append([])
    summary.append(["currency", "state", "rows", "amount"])
    for (currency, state), (count, amount) in _totals(materialised).items():
        # Amounts stay text so the workbook shows the exact decimal, not a binary float.
        summary.append(text_cells(summary, [currency, state, count, display_amount(amount)]))
    sheet = workbook.create_sheet("Rows")
    sheet.append(HEADER)
    for row in materialised:
        sheet.append(text_cells(sheet, _cells(row)))
    workbook.save(paths.xlsx)
    return paths
