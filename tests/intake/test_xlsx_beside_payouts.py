"""Refund, links and corrections files are read from XLSX as from CSV: the XLSX reader once
checked every file's header against the payout columns, so none of them could be an XLSX."""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook

from payflow.links.rows import read_link_rows
from payflow.refunds.intake import read_refund_file
from payflow.rerun import read_corrections

ORDER = "6f1c1c2e-8f5e-4a55-9a43-1d1f2c3b4a5e"


def _xlsx(path: Path, *rows: list[object]) -> Path:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def test_a_refund_file_in_xlsx_is_read(tmp_path):
    path = _xlsx(tmp_path / "refunds.xlsx", ["orderId", "externalId", "amount"], [ORDER, "r-1", 25])
    file = read_refund_file(path)
    assert file.frame[["orderId", "externalId", "amount"]].values.tolist() == [[ORDER, "r-1", "25"]]


def test_a_links_file_in_xlsx_is_read(tmp_path):
    path = _xlsx(tmp_path / "links.xlsx", ["externalId", "userId", "amount"], ["l-1", "u-1", 300])
    report = read_link_rows(path)
    assert (report.rows, report.rejected) == (1, 0)
    assert [row.external_id for row in report.valid] == ["l-1"]


def test_a_corrections_file_in_xlsx_is_read(tmp_path):
    path = _xlsx(
        tmp_path / "fix.xlsx", ["externalId", "requisites"], ["jun-003", "40817810299910000042"]
    )
    [correction] = read_corrections(path).values()
    assert correction.changes == {"requisites": "40817810299910000042"}
