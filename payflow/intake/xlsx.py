"""Reading the cells of one XLSX sheet as text: cached values of formulas, Excel numbers undone."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from dataclasses import dataclass
from itertools import islice
from typing import Any
from xml.etree.ElementTree import ParseError

from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.workbook.workbook import Workbook

from payflow.intake.cells import LostDigitsError, cell_text, shown_text
from payflow.intake.columns import PAYOUT_COLUMNS, ReadColumns
from payflow.intake.headers import SCANNED_ROWS, MissingColumns, missing_columns_error
from payflow.intake.limits import ReadLimits
from payflow.intake.problems import BatchFileError, Problem, SheetToChoose, shown_value
from payflow.intake.unpacking import refuse_bombs
from payflow.intake.xlsx_scan import sheet_problems


@dataclass(frozen=True, slots=True)
class _Opened:
    """A workbook open for streaming, with its archive and each sheet's XML part in it (for the
    scan of what the cells do not show)."""

    workbook: Workbook
    archive: zipfile.ZipFile
    sheet_paths: dict[str, str]


def _open(data: bytes, name: str, limits: ReadLimits) -> _Opened:
    try:
        # What load_workbook does, keeping the reader: its archive and its workbook parser say
        # where each sheet's XML is, which the read-only workbook keeps only in private fields.
        # data_only: a formula cell gives the value Excel cached when it last saved the file.
        # keep_links off: a linked workbook's cached cells are never read (nor unpacked whole).
        reader = ExcelReader(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        refuse_bombs(reader.archive, name, len(data), limits.max_cell_chars)
        reader.read()
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
    paths = {sheet.name: rel.target for sheet, rel in reader.parser.find_sheets()}
    return _Opened(reader.wb, reader.archive, paths)


@dataclass(frozen=True)
class SheetRead:
    """The sheet a workbook was read from, and whether it is the workbook's first."""

    title: str
    first: bool


def read_xlsx_cells(
    data: bytes,
    name: str,
    sheet: str | None,
    limits: ReadLimits,
    missing_columns: MissingColumns | None = None,
    columns: ReadColumns = PAYOUT_COLUMNS,
) -> tuple[list[list[str]], list[Problem], SheetRead]:
    """Rows of text cells (header first), the cells whose numbers Excel could not keep exact,
    and the sheet read.

    The limits apply row by row, so a sheet of a million empty rows stops early. With
    `missing_columns` (a payout batch's), a header that lacks required columns is refused at
    once, naming a title row or another sheet that seems to hold them. `columns` are those
    the caller reads: hidden and merged cells, dates and formula errors count only there."""
    opened = _open(data, name, limits)
    workbook = opened.workbook
    try:
        worksheet = _chosen_sheet(workbook, name, sheet, missing_columns)
        rows: list[list[str]] = []
        problems: list[Problem] = []
        header: list[str] = []
        reads: list[str | None] = []  # the column each header feeds, None where it feeds none
        blank_run = 0
        # The stated size (<dimension>) may be wrong: trusted, it would cut rows off silently.
        # max_col bounds the width instead: a stated 16,384 columns would pad every row to it.
        worksheet.reset_dimensions()
        # Cells, not values: a number's format says what the operator saw (15 shown as 1500%).
        cells = worksheet.iter_rows(max_col=limits.max_columns + 1)
        for offset, values in enumerate(cells):
            if offset == 0:
                header = [cell_text(c.value).strip() for c in values]
                while header and not header[-1]:
                    header.pop()
                limits.check_columns(name, len(header))
                missing = missing_columns(header) if missing_columns else []
                if missing:
                    top = [[cell_text(c.value) for c in row] for row in islice(cells, SCANNED_ROWS)]
                    raise missing_columns_error(
                        name, header, top, missing, lambda: other_sheet_headers(workbook, sheet)
                    )
                rows.append(header)
                reads = [columns.column_of(h) if h else None for h in header]
                continue
            texts = _row_text(
                values[: len(header)], header, reads, columns, offset + 1, problems, limits, name
            )
            if any(texts):
                blank_run = 0
                limits.check_rows(name, offset)
            else:
                blank_run += 1
                limits.check_blank_run(name, offset + 1 - blank_run, blank_run)
            rows.append(texts)
        path = opened.sheet_paths.get(worksheet.title)
        if path is None:  # never seen: unscanned, hidden rows would be paid unseen
            raise BatchFileError(f"{name}: sheet {worksheet.title!r} has no part in the workbook")
        problems += sheet_problems(opened.archive, path, header, rows, columns)
        read = SheetRead(worksheet.title, worksheet.title == workbook.sheetnames[0])
    except ParseError as exc:  # openpyxl parses a sheet's XML only as its rows are read
        raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
    finally:
        workbook.close()
    # A row a read problem emptied is kept, to be rejected with its reason, not dropped as blank.
    emptied = {problem.row for problem in problems}
    while len(rows) > 1 and not any(rows[-1]) and len(rows) not in emptied:
        rows.pop()
    return rows, problems, read


def _chosen_sheet(
    workbook: Workbook, name: str, sheet: str | None, missing_columns: MissingColumns | None
) -> Any:
    """The sheet named, or else the first visible one: a hidden sheet is never read unasked (the
    first sheet, hidden, held last month's rows and they were paid), and payout rows on two
    visible sheets are refused rather than guessed at."""
    if sheet is not None:
        if sheet not in workbook.sheetnames:
            names = ", ".join(workbook.sheetnames)
            raise BatchFileError(f"{name} has no sheet named {sheet!r} (sheets: {names})")
        return workbook[sheet]
    visible = [ws for ws in workbook.worksheets if ws.sheet_state == "visible"]
    if not visible:
        raise SheetToChoose(
            f"{name} has no visible sheet", workbook.sheetnames, "name one with --sheet"
        )
    chosen = visible[0]
    if missing_columns is None or missing_columns(_first_row(chosen)):
        return chosen  # a header lacking columns is refused, naming a sheet that has them
    holding = [chosen, *(ws for ws in visible[1:] if not missing_columns(_first_row(ws)))]
    if len(holding) > 1:
        names = ", ".join(repr(ws.title) for ws in holding)
        raise SheetToChoose(
            f"{name} has payout rows on {len(holding)} sheets ({names})",
            [ws.title for ws in holding],
            "choose one with --sheet NAME",
        )
    return chosen


def _first_row(worksheet: Any) -> list[str]:
    for values in worksheet.iter_rows(values_only=True, max_row=1, max_col=64):
        return [cell_text(v).strip() for v in values]
    return []


SHOWN_OTHERWISE = (
    "{column} shows {shown} but the cell holds {held}: its number format ({format}) shows "
    "another number than it holds; format the column as Number with two decimals (or as Text) "
    "and type the value meant"
)


def _row_text(
    cells: tuple[Any, ...],
    header: list[str],
    reads: list[str | None],
    columns: ReadColumns,
    row: int,
    problems: list[Problem],
    limits: ReadLimits,
    name: str,
) -> list[str]:
    """A row's texts, and the problems of the cells of the columns read (`reads`, of `columns`,
    in the header's order; None where a header feeds no column): a number
    that lost digits or shows another number, a date, a formula's error. A column no reader
    reads is sent nowhere, whatever it holds."""
    texts: list[str] = []
    for index, cell in enumerate(cells):
        value = cell.value
        read_as = reads[index]
        try:
            text = cell_text(value)
        except LostDigitsError as exc:
            if read_as is not None:
                problems.append(Problem(row, header[index], "number_lost_digits", str(exc)))
            # Unread, it still counts as filled (a value under no header is named).
            text = "" if read_as is not None else str(value)
        # type(), not isinstance: a bool is an int too, and TRUE has no number format to hide.
        if type(value) in (int, float) and read_as is not None:
            shown = shown_text(value, cell.number_format)
            if shown is not None:
                # A phone shown as a percentage is still personal data: masked like a value.
                message = SHOWN_OTHERWISE.format(
                    column=header[index],
                    shown=shown_value(read_as, shown),
                    held=shown_value(read_as, text),
                    format=cell.number_format,
                )
                problems.append(Problem(row, header[index], "number_shown_otherwise", message))
                text = ""  # read as nothing: its one reject is this one
        error = cell.data_type == "e"
        if (error or isinstance(value, dt.date | dt.time)) and read_as is not None:
            problem = _not_as_typed(row, header[index], read_as, text, columns, error=error)
            if problem is not None:
                problems.append(problem)
                text = ""  # read as nothing: its one reject is this one
        # Every column, read or not: a bound on what reading holds (as the XML scan before it,
        # which knows no columns), not a judgement of a value sent.
        if len(text) > limits.max_cell_chars:
            limits.check_cell(name, row, header[index], len(text))
        texts.append(text)
    return texts


DATE_CELL = (
    "{column} holds the date or time {held}, not the text typed: a spreadsheet reads 5.1, 1-2 "
    "or 12:30 as a date or time; format the column as Text and type the value again"
)
FORMULA_ERROR = (
    "{column} shows the error {held}: the formula that fills it failed (a lookup that found "
    "nothing, a division by zero); fix the formula or type the value"
)


def _not_as_typed(
    row: int, column: str, read_as: str, text: str, columns: ReadColumns, *, error: bool
) -> Problem | None:
    """A formula's error (#N/A) or a date in a column read (as `read_as`) is no value the
    operator meant: a VLOOKUP that found nothing paid a recipient named #N/A, and an externalId
    typed 5.1 went as 2026-01-05T00:00:00. Free text (a note) may hold a date."""
    if read_as in columns.free_text and not error:
        return None
    if error:  # an error code (#N/A) is no personal data: shown as it is
        return Problem(row, column, "formula_error", FORMULA_ERROR.format(column=column, held=text))
    held = shown_value(read_as, text)
    return Problem(row, column, "date_cell", DATE_CELL.format(column=column, held=held))


def other_sheet_headers(workbook: Workbook, sheet: str | None) -> dict[str, list[list[str]]]:
    """The first rows of every sheet but the one read, to say where a missing header may be."""
    read = sheet or workbook.sheetnames[0]
    return {
        title: [
            [cell_text(v) for v in values]
            for values in workbook[title].iter_rows(
                values_only=True, max_row=SCANNED_ROWS, max_col=64
            )
        ]
        for title in workbook.sheetnames
        if title != read
    }
