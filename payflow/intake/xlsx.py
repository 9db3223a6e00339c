"""Reading the cells of one XLSX sheet as text: cached values of formulas, Excel numbers undone."""

from __future__ import annotations

import io
import zipfile

from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException

from payflow.intake.cells import LostDigitsError, cell_text
from payflow.intake.problems import BatchFileError, Problem


def read_xlsx_cells(
    data: bytes, name: str, sheet: str | None
) -> tuple[list[list[str]], list[Problem]]:
    """Rows of text cells (header first) and the cells whose numbers Excel could not keep exact."""
    try:
        # data_only: a formula cell gives the value Excel cached when it last saved the file.
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
    try:
        if sheet is None:
            worksheet = workbook.worksheets[0]
        elif sheet in workbook.sheetnames:
            worksheet = workbook[sheet]
        else:
            names = ", ".join(workbook.sheetnames)
            raise BatchFileError(f"{name} has no sheet named {sheet!r} (sheets: {names})")
        rows: list[list[str]] = []
        problems: list[Problem] = []
        header: list[str] = []
        for offset, values in enumerate(worksheet.iter_rows(values_only=True)):
            if offset == 0:
                header = [cell_text(v).strip() for v in values]
                rows.append(header)
                continue
            rows.append(_row_text(values, header, offset + 1, problems))
    finally:
        workbook.close()
    while len(rows) > 1 and not any(rows[-1]):
        rows.pop()
    return rows, problems


def _row_text(
    values: tuple[object, ...], header: list[str], row: int, problems: list[Problem]
) -> list[str]:
    texts: list[str] = []
    for index, value in enumerate(values):
        try:
            texts.append(cell_text(value))
        except LostDigitsError as exc:
            column = header[index] if index < len(header) else f"column {index + 1}"
            problems.append(Problem(row, column, "number_lost_digits", str(exc)))
            texts.append("")
    return texts
