"""A cell styled from the workbook's styles cache wears what it would have worn styled directly."""

from __future__ import annotations

from copy import copy
from pathlib import Path
from typing import Any

from openpyxl import Workbook, load_workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font, PatternFill

from payflow.reporting.cell_styles import CellStyles

GREEN = PatternFill("solid", start_color="C6EFCE", end_color="C6EFCE")
RED = PatternFill("solid", start_color="FFC7CE", end_color="FFC7CE")
WRAP = Alignment(wrap_text=True, vertical="top")
TOP = Alignment(vertical="top")
BOLD = Font(bold=True)
# Each combination twice in a row (the second from the cache), and again after the others.
COMBINATIONS: list[dict[str, Any]] = [
    {"number_format": "#,##0.00", "alignment": TOP},
    {"number_format": "#,##0.00", "alignment": TOP},
    {"number_format": "#,##0", "alignment": TOP},
    {"fill": GREEN, "alignment": WRAP},
    {"fill": GREEN, "alignment": WRAP},
    {"fill": RED, "alignment": WRAP},
    {"fill": RED},
    {"font": BOLD},
    {"number_format": "yyyy-mm-dd hh:mm:ss"},
    {"number_format": "#,##0", "alignment": TOP},
    {"fill": GREEN, "alignment": WRAP},
    {},
]


def _write(path: Path, cached: bool) -> None:
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("rows")
    styles = CellStyles()
    for index, wears in enumerate(COMBINATIONS):
        cell = WriteOnlyCell(sheet, value=index)
        if cached:
            styles.dress(cell, **wears)
        else:
            for name, value in wears.items():
                setattr(cell, name, value)
        sheet.append([cell])
    workbook.save(path)


def test_cached_styles_are_the_styles_set_directly(tmp_path: Path) -> None:
    _write(tmp_path / "direct.xlsx", cached=False)
    _write(tmp_path / "cached.xlsx", cached=True)
    direct = load_workbook(tmp_path / "direct.xlsx")["rows"]
    cached = load_workbook(tmp_path / "cached.xlsx")["rows"]
    lines = zip(COMBINATIONS, direct.iter_rows(), cached.iter_rows(), strict=True)
    for wears, (want,), (got,) in lines:
        assert got.number_format == want.number_format, wears
        # Copies: openpyxl's style proxies of two workbooks never compare equal.
        assert copy(got.fill) == copy(want.fill), wears
        assert copy(got.alignment) == copy(want.alignment), wears
        assert copy(got.font) == copy(want.font), wears
        assert got.style_id == want.style_id, wears  # the same ids, in the same order
