"""Writing a batch template: a CSV, or an XLSX with a notes sheet and list validation."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from openpyxl import Workbook
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from payflow.atomic import replaced, save_workbook

TEMPLATE_ROWS = 1000  # rows below the header that carry the list validation and text format
TEXT_COLUMNS = ("requisites", "externalId", "userId", "userPhone", "bik", "serviceId")


def write_template_csv(rows: Sequence[Sequence[str]], path: Path) -> Path:
    """Header and example rows as a UTF-8 CSV with a BOM (Excel then reads Cyrillic right)."""
    with replaced(path) as part, part.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def write_template_xlsx(
    rows: Sequence[Sequence[str]],
    notes: Sequence[Sequence[str]],
    choices: Mapping[str, Sequence[str]],
    path: Path,
) -> Path:
    """Sheet `payouts` (header, examples, lists for the `choices` columns, text cells where
    digits must stay digits) and sheet `notes` (the columns table)."""
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None  # a new workbook always has one sheet
    sheet.title = "payouts"
    header = list(rows[0])
    for row in rows:
        sheet.append(list(row))
    last = TEMPLATE_ROWS + 1
    for column, values in choices.items():
        letter = get_column_letter(header.index(column) + 1)
        listed = DataValidation(
            type="list",
            formula1='"' + ",".join(values) + '"',
            allow_blank=True,
            showErrorMessage=True,
            errorStyle="warning",  # another valid code can still be typed, after a warning
            errorTitle=f"{column} not in the list",
            error=f"{column} is usually one of: {', '.join(values)}",
        )
        listed.add(f"{letter}2:{letter}{last}")
        sheet.add_data_validation(listed)
    for column in TEXT_COLUMNS:
        letter = get_column_letter(header.index(column) + 1)
        for (cell,) in sheet.iter_rows(min_row=2, max_row=last, min_col=header.index(column) + 1,
                                       max_col=header.index(column) + 1):  # fmt: skip
            cell.number_format = "@"  # a phone or an account typed here stays text
        sheet.column_dimensions[letter].width = 24
    explained = workbook.create_sheet("notes")
    for row in notes:
        explained.append(list(row))
    with replaced(path) as part:
        save_workbook(workbook, part)
    return path
