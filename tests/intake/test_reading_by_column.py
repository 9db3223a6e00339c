"""A plain sheet's rows taken a column at a time read as a row at a time would read them."""

from __future__ import annotations

import gc
from datetime import datetime
from pathlib import Path
from typing import NoReturn

import pytest
from intake_files import HEADER, ROW, write_xlsx
from openpyxl import Workbook

from payflow.intake import BatchFileError, RawBatch, read_batch_file, xlsx
from payflow.intake.limits import ReadLimits


def _mixed(path: Path) -> Path:
    """Problems in several columns of several rows: a column at a time finds them column by
    column, a row at a time row by row."""
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append([*HEADER, "note"])
    sheet.append([1500.5, *ROW[1:6], datetime(2026, 1, 5), "n"])  # G2: a date
    sheet.append([15, *ROW[1:6], datetime(2026, 2, 5), 7])  # A3 shown otherwise, G3 a date
    sheet.append([0.1 + 0.2, *ROW[1:3], 12345678901234567890, *ROW[4:6], "x-4", True])
    sheet.append([300, *ROW[1:6], "x-5", "free text"])
    sheet.append([1500.5, *ROW[1:6], "x-6", None])
    sheet["A3"].number_format = "0%"
    sheet["A5"].number_format = "0.00"
    workbook.save(path)
    return path


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, *, by_column: bool) -> RawBatch:
    """The sheet read by calamine, its rows taken a column at a time or a row at a time."""
    with monkeypatch.context() as patch:
        patch.setattr(xlsx, "_open", _not_asked)  # openpyxl's reader
        if by_column:
            patch.setattr(xlsx, "_take_row_by_row", _not_asked)
        else:
            patch.setattr(xlsx, "_texts_by_column", lambda *args: None)
        return read_batch_file(path)


def _not_asked(*args: object) -> NoReturn:
    raise AssertionError("the sheet should have been read the other way")


def test_a_column_at_a_time_reads_the_same_rows_and_problems_in_the_same_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _mixed(tmp_path / "mixed.xlsx")
    by_column = _read(path, monkeypatch, by_column=True)
    by_row = _read(path, monkeypatch, by_column=False)

    assert by_column.frame.to_dict() == by_row.frame.to_dict()
    found = [(p.row, p.column, p.rule) for p in by_column.read_problems]
    assert found == [(p.row, p.column, p.rule) for p in by_row.read_problems]
    # The sheet's order: row 3's amount before its externalId, though its column comes first.
    assert found[:3] == [
        (2, "externalId", "date_cell"),
        (3, "amount", "number_shown_otherwise"),
        (3, "externalId", "date_cell"),
    ]
    assert (4, "requisites", "number_lost_digits") in found


def test_a_cell_too_long_is_named_by_the_sheets_order_not_the_columns(tmp_path: Path) -> None:
    # Two cells past the bound: row 3's (a later column) comes first in the sheet, and the
    # column at a time, which would meet row 4's first, leaves the refusal to the rows.
    long = [*ROW[:6], "x" * 50]
    write_xlsx(tmp_path / "long.xlsx", [HEADER, ROW, long, [ROW[0], "y" * 50, *ROW[2:]]])
    limits = ReadLimits(max_rows=100, max_columns=50, max_cell_chars=40, max_blank_rows=10)

    with pytest.raises(BatchFileError, match=r"row 3, column 'externalId'"):
        read_batch_file(tmp_path / "long.xlsx", limits=limits)


def test_a_sheet_is_read_with_the_collector_paused_and_resumed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    original = xlsx.calamine_rows

    def recorded(data: bytes, title: str) -> object:
        seen.append(gc.isenabled())
        return original(data, title)

    monkeypatch.setattr(xlsx, "calamine_rows", recorded)
    assert gc.isenabled()
    read_batch_file(_mixed(tmp_path / "mixed.xlsx"))
    assert seen == [False]
    assert gc.isenabled()
