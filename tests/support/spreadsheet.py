"""What a spreadsheet program makes of a workbook: LibreOffice opens it, computes it and saves
each sheet as CSV, so a test sees whether a cell was evaluated as a formula."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

# Comma, double quote, UTF-8, from line 1, every sheet to its own `<stem>-<sheet>.csv` (-1).
CSV_ALL_SHEETS = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1"


def computed_sheets(xlsx: Path, out_dir: Path) -> dict[str, list[list[str]]]:
    """Each sheet of `xlsx` as LibreOffice shows it after opening (formulas computed)."""
    soffice = shutil.which("soffice")
    if soffice is None:
        reason = "LibreOffice (soffice) not installed: the workbook is not opened in one"
        if os.environ.get("CI", "").lower() == "true":  # test.sh installs it
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(f"{reason} (bash scripts/install-report-tools.sh)")
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [soffice, "--headless", "--convert-to", CSV_ALL_SHEETS, "--outdir", str(out_dir), xlsx],
        check=True,
        capture_output=True,
        timeout=180,
        # Its own profile: two conversions sharing one would wait for each other or fail.
        env={"HOME": str(out_dir), "PATH": "/usr/bin:/bin"},
    )
    sheets: dict[str, list[list[str]]] = {}
    for path in out_dir.glob(f"{xlsx.stem}-*.csv"):
        with path.open(newline="", encoding="utf-8") as handle:
            sheets[path.stem.removeprefix(f"{xlsx.stem}-")] = list(csv.reader(handle))
    assert sheets, f"LibreOffice wrote no CSV for {xlsx}"
    return sheets


def cut_short(xlsx: Path) -> list[str]:
    """`Sheet!B: orderId` for each column narrower than its longest value (numbers as written
    in the XLSX, 2 decimals): what a spreadsheet shows cut off, or as ###, when opened."""
    from openpyxl import load_workbook
    from openpyxl.utils import get_column_letter

    found = []
    for sheet in load_workbook(xlsx):
        for index, column in enumerate(sheet.iter_cols(values_only=True), start=1):
            letter = get_column_letter(index)
            longest = max(
                len(f"{v:,.2f}" if isinstance(v, float) else str(v))
                for v in column
                if v is not None
            )
            # openpyxl reads an unset width as 13, a spreadsheet's default.
            if longest > (sheet.column_dimensions[letter].width or 13):
                found.append(f"{sheet.title}!{letter}: {column[0]}")
    return found


def print_setup(sheet: Any) -> tuple[object, ...]:
    """(orientation, fit to page, pages wide, pages long, rows repeated on each page) of an
    openpyxl sheet: ("landscape", True, 1, 0, "$1:$1") prints one page wide, header on each."""
    setup = sheet.page_setup
    fit = sheet.sheet_properties.pageSetUpPr
    return (
        setup.orientation,
        bool(fit and fit.fitToPage),
        setup.fitToWidth,
        setup.fitToHeight,
        sheet.print_title_rows,
    )
