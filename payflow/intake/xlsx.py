"""Reading the cells of one XLSX sheet as text: cached values of formulas, Excel numbers undone."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any
from xml.etree.ElementTree import ParseError

from openpyxl.cell.read_only import EMPTY_CELL
from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.workbook.workbook import Workbook

from payflow import collecting
from payflow.intake.cells import LostDigitsError, cell_text, fixes_decimals, shown_text
from payflow.intake.columns import PAYOUT_COLUMNS, ReadColumns
from payflow.intake.headers import SCANNED_ROWS, MissingColumns, missing_columns_error
from payflow.intake.limits import ReadLimits
from payflow.intake.problems import BatchFileError, Problem, SheetToChoose, shown_value
from payflow.intake.unpacking import BombCheck, CheckedArchive
from payflow.intake.xlsx_fast import CALAMINE_READS, Special, calamine_rows, plain_sheet
from payflow.intake.xlsx_scan import SheetScan, sheet_problems

_CORRUPT = (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError)


@dataclass(frozen=True, slots=True)
class _Opened:
    """A workbook open for streaming, with its archive and each sheet's XML part in it (for the
    scan of what the cells do not show)."""

    workbook: Workbook
    archive: zipfile.ZipFile
    sheet_paths: dict[str, str]


def _reader(data: bytes, name: str, limits: ReadLimits) -> tuple[ExcelReader, BombCheck]:
    """An openpyxl reader over an archive checked for bombs before any part is parsed, and its
    check: a sheet's part is left to be checked as it is read (`BombCheck.read_checked`); any
    part openpyxl opens is checked before (`CheckedArchive`)."""
    try:
        # What load_workbook does, keeping the reader: its archive and its workbook parser say
        # where each sheet's XML is, which the read-only workbook keeps only in private fields.
        # data_only: a formula cell gives the value Excel cached when it last saved the file.
        # keep_links off: a linked workbook's cached cells are never read (nor unpacked whole).
        reader = ExcelReader(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        archive = CheckedArchive(io.BytesIO(data))
        reader.archive = archive
        checks = BombCheck(archive, name, len(data), limits.max_cell_chars)
        checks.check_rest(leaving=lambda part: _SHEET_PART.fullmatch(part) is not None)
        archive.checks = checks
    except _CORRUPT as exc:
        raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
    return reader, checks


# Where spreadsheet programs put a sheet's part: left to be checked as it is read. A workbook
# that puts another part there has it checked when openpyxl opens it.
_SHEET_PART = re.compile(r"xl/worksheets/[^/]+\.xml")


def _open(reader: ExcelReader, name: str) -> _Opened:
    try:
        reader.read()
    except _CORRUPT as exc:
        raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
    paths = {sheet.name: rel.target for sheet, rel in reader.parser.find_sheets()}
    return _Opened(reader.wb, reader.archive, paths)


@dataclass(frozen=True)
class SheetRead:
    """The sheet a workbook was read from, and whether it is the workbook's first."""

    title: str
    first: bool


# A row's list and its texts all live on: no collection during the read finds garbage.
@collecting.paused()
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
    reader, checks = _reader(data, name, limits)
    fast = _read_plain(reader, checks, data, name, sheet, limits, missing_columns, columns)
    if fast is not None:
        return fast
    checks.check_rest()  # the sheets' parts not read yet, before openpyxl reads any of them
    opened = _open(reader, name)
    workbook = opened.workbook
    try:
        worksheet = _chosen_sheet(workbook, name, sheet, missing_columns)
        table = _Table(name, limits, columns)
        # The stated size (<dimension>) may be wrong: trusted, it would cut rows off silently.
        # max_col bounds the width instead: a stated 16,384 columns would pad every row to it.
        worksheet.reset_dimensions()
        # Cells, not values: a number's format says what the operator saw (15 shown as 1500%).
        cells = worksheet.iter_rows(max_col=limits.max_columns + 1)
        for offset, values in enumerate(cells):
            if offset == 0:
                missing = table.start([c.value for c in values], missing_columns)
                if missing:
                    top = [[cell_text(c.value) for c in row] for row in islice(cells, SCANNED_ROWS)]
                    raise missing_columns_error(
                        name,
                        table.header,
                        top,
                        missing,
                        lambda: other_sheet_headers(workbook, sheet),
                    )
                continue
            number = offset + 1
            # openpyxl pads every row to max_col: the cells past the header are read only when
            # one holds something (a column under no header is named, as in a CSV).
            width = len(table.header)
            if set(map(id, values[width:])) <= _PADDING:  # by identity: cells compare oddly
                values = values[:width]
            texts = [
                ""
                if c is EMPTY_CELL
                else table.cell(number, index, c.value, c.number_format, error=c.data_type == "e")
                for index, c in enumerate(values)
            ]
            table.add(number, texts)
        path = opened.sheet_paths.get(worksheet.title)
        if path is None:  # never seen: unscanned, hidden rows would be paid unseen
            raise BatchFileError(f"{name}: sheet {worksheet.title!r} has no part in the workbook")
        read = SheetRead(worksheet.title, worksheet.title == workbook.sheetnames[0])
        return table.finish(opened.archive, path), table.problems, read
    except ParseError as exc:  # openpyxl parses a sheet's XML only as its rows are read
        raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
    finally:
        workbook.close()


def _read_plain(
    reader: ExcelReader,
    checks: BombCheck,
    data: bytes,
    name: str,
    sheet: str | None,
    limits: ReadLimits,
    missing_columns: MissingColumns | None,
    columns: ReadColumns,
) -> tuple[list[list[str]], list[Problem], SheetRead] | None:
    """The sheet read by calamine when `payflow.intake.xlsx_fast` vouches for it and it reads
    as openpyxl would read it; None for openpyxl's reader to read it."""
    try:
        plain = plain_sheet(reader, sheet, limits, fixes_decimals, checks)
    except _CORRUPT:
        return None  # openpyxl's reader names the fault
    if plain is None:
        return None
    checks.check_rest()  # calamine reads the archive itself: every part is checked before
    rows = calamine_rows(data, plain.title)
    if not rows:
        return None
    table = _Table(name, limits, columns)
    if table.start(rows[0], missing_columns):
        return None  # refused with the hints openpyxl's workbook gives (other sheets' headers)
    body = rows[1:]
    by_column = _texts_by_column(table, body, plain.specials)
    if by_column is not None:
        table.add_all(by_column)
    elif not _take_row_by_row(table, body, plain.specials):
        return None  # a date by calamine's reading of a style, not by openpyxl's
    read = SheetRead(plain.title, plain.first)
    return table.finish(reader.archive, plain.path, plain.scan), table.problems, read


_TEXT = {str}
_PADDING = {id(EMPTY_CELL)}
_NUMBERS = (float, int, bool)


def _take_row_by_row(
    table: _Table, body: list[list[Any]], specials: dict[tuple[int, int], Special]
) -> bool:
    """Take calamine's data rows into `table` a row at a time, in the sheet's order (its first
    fault raised is the sheet's first); False when calamine read a date where openpyxl reads a
    number."""
    special_rows = {row for row, _ in specials}
    numbers: dict[Any, str] = {}  # each distinct number's text, once (amounts repeat)
    longest = table.limits.max_cell_chars
    for number, values in enumerate(body, start=2):
        texts: list[str] = values
        if number in special_rows or not set(map(type, values)) <= _TEXT:
            # A row without special cells (nearly all) looks none up, cell by cell.
            texts = []
            for index, value in enumerate(values):
                special = specials.get((number, index + 1)) if number in special_rows else None
                text = _plain_text(table, number, index, value, special, numbers)
                if text is None:
                    return False
                texts.append(text)
        if texts and max(map(len, texts)) > longest:
            index = next(i for i, text in enumerate(texts) if len(text) > longest)
            table.limits.check_cell(table.name, number, table.column_name(index), len(texts[index]))
        table.add(number, texts)
    return True


def _texts_by_column(
    table: _Table, body: list[list[Any]], specials: dict[tuple[int, int], Special]
) -> list[list[str]] | None:
    """The data rows' texts read a column at a time: the same texts and problems as
    `_take_row_by_row`, but a column of text only is taken whole, never a cell at a time. None
    (and no problem kept) wherever the order of reading could matter: rows of unequal widths, a
    fault to raise, a cell too long, a value openpyxl would read otherwise; then the rows are
    read one by one, in the sheet's order."""
    if len({len(values) for values in body}) > 1:
        return None
    kept = len(table.problems)
    in_columns: dict[int, dict[int, Special]] = {}
    for (row, place), special in specials.items():
        in_columns.setdefault(place - 1, {})[row] = special
    numbers: dict[Any, str] = {}
    # calamine's grid: every row as wide, so no column is cut short.
    columns: list[Sequence[Any]] = list(zip(*body, strict=True))
    try:
        for index, column in enumerate(columns):
            in_column = in_columns.get(index, {})
            if not in_column and set(map(type, column)) <= _TEXT:
                continue
            texts = [
                _plain_text(table, number, index, value, in_column.get(number), numbers)
                for number, value in enumerate(column, start=2)
            ]
            if None in texts:
                raise _RowByRow
            columns[index] = texts
        if any(
            max(map(len, column), default=0) > table.limits.max_cell_chars for column in columns
        ):
            raise _RowByRow
    except (_RowByRow, BatchFileError):
        del table.problems[kept:]
        return None
    # Taken a column at a time, the problems are put back in the sheet's order: by row, then
    # (a stable sort) by column, as a row at a time would have found them.
    table.problems[kept:] = sorted(table.problems[kept:], key=lambda problem: problem.row)
    return list(map(list, zip(*columns, strict=True))) if columns else [[] for _ in body]


class _RowByRow(Exception):
    """A column at a time cannot say what a row at a time would: the rows are read one by one."""


def _plain_text(
    table: _Table,
    number: int,
    index: int,
    value: Any,
    special: Special | None,
    numbers: dict[Any, str],
) -> str | None:
    """One cell's text from calamine's value, a special cell decoded as openpyxl reads it; None
    when calamine read a date where openpyxl reads a number."""
    kind = type(value)
    if special is None and kind is str:
        return value  # type: ignore[no-any-return]
    if special is None and kind is float and value in numbers:
        return numbers[value]
    if special is None and kind in _NUMBERS:
        text = table.cell(number, index, value, "General", error=False)
        # Kept for the next cell of the same value only from a column that is read: an unread
        # one keeps a long number's digits unjudged, and a read cell must not take that text
        # without its problem.
        if kind is float and text and table.reads_column(index):
            numbers[value] = text
        return text
    if special is None:
        return None
    held = value if special.value is CALAMINE_READS else special.value
    return table.cell(number, index, held, special.number_format, error=False)


class _Table:
    """The rows read so far (header first), their read problems and the row limits, the same
    for either reader."""

    def __init__(self, name: str, limits: ReadLimits, columns: ReadColumns) -> None:
        self.name = name
        self.limits = limits
        self.columns = columns
        self.header: list[str] = []
        self.reads: list[str | None] = []  # the column each header feeds, None where none
        self.rows: list[list[str]] = []
        self.problems: list[Problem] = []
        self.blank_run = 0

    def start(self, values: list[Any], missing_columns: MissingColumns | None) -> list[str]:
        """Take the header row; the required columns it lacks (then nothing is taken)."""
        header = [cell_text(v).strip() for v in values]
        while header and not header[-1]:
            header.pop()
        self.header = header
        self.limits.check_columns(self.name, len(header))
        missing = list(missing_columns(header)) if missing_columns else []
        if not missing:
            self.rows.append(header)
            self.reads = [self.columns.column_of(h) if h else None for h in header]
        return missing

    def reads_column(self, index: int) -> bool:
        """Whether a reader reads the column at `index` (its cells are judged)."""
        return index < len(self.reads) and self.reads[index] is not None

    def column_name(self, index: int) -> str:
        return self.header[index] if index < len(self.header) else ""

    def cell(self, row: int, index: int, value: Any, number_format: str, *, error: bool) -> str:
        """One cell's text, and its problems when a column read holds it: a number that lost
        digits or shows another number, a date, a formula's error. A column no reader reads
        (or under no header) is sent nowhere, whatever it holds."""
        read_as = self.reads[index] if self.reads_column(index) else None
        column = self.column_name(index)
        try:
            text = cell_text(value)
        except LostDigitsError as exc:
            if read_as is not None:
                self.problems.append(Problem(row, column, "number_lost_digits", str(exc)))
            # Unread, it still counts as filled (a value under no header is named).
            text = "" if read_as is not None else str(value)
        # type(), not isinstance: a bool is an int too, and TRUE has no number format to hide.
        if type(value) in (int, float) and read_as is not None:
            shown = shown_text(value, number_format)
            if shown is not None:
                # A phone shown as a percentage is still personal data: masked like a value.
                message = SHOWN_OTHERWISE.format(
                    column=column,
                    shown=shown_value(read_as, shown),
                    held=shown_value(read_as, text),
                    format=number_format,
                )
                self.problems.append(Problem(row, column, "number_shown_otherwise", message))
                text = ""  # read as nothing: its one reject is this one
        if (error or isinstance(value, dt.date | dt.time)) and read_as is not None:
            problem = _not_as_typed(row, column, read_as, text, self.columns, error=error)
            if problem is not None:
                self.problems.append(problem)
                text = ""  # read as nothing: its one reject is this one
        # Every column, read or not: a bound on what reading holds (as the XML scan before it,
        # which knows no columns), not a judgement of a value sent.
        if len(text) > self.limits.max_cell_chars:
            self.limits.check_cell(self.name, row, column, len(text))
        return text

    def add_all(self, body: list[list[str]]) -> None:
        """Every data row, under the row limits: at once when all are filled and within them."""
        first = len(self.rows) + 1
        if all(map(any, body)) and first - 2 + len(body) <= self.limits.max_rows:
            self.blank_run = 0 if body else self.blank_run
            self.rows.extend(body)
            return
        for row, texts in enumerate(body, start=first):
            self.add(row, texts)

    def add(self, row: int, texts: list[str]) -> None:
        """One data row (`row`: its number in the sheet), under the row limits."""
        if any(texts):
            self.blank_run = 0
            self.limits.check_rows(self.name, row - 1)
        else:
            self.blank_run += 1
            self.limits.check_blank_run(self.name, row - self.blank_run, self.blank_run)
        self.rows.append(texts)

    def finish(
        self, archive: zipfile.ZipFile, path: str, scan: SheetScan | None = None
    ) -> list[list[str]]:
        """The rows, with the sheet's XML problems added: a header widened to the last column
        holding a value (a column under no header is named, as in a CSV, not dropped) and the
        trailing empty rows dropped."""
        rows, header = self.rows, self.header
        width = max((_filled_width(texts) for texts in rows[1:]), default=0)
        header.extend([""] * (width - len(header)))
        self.problems += sheet_problems(archive, path, header, rows, self.columns, scan)
        # A row a read problem emptied is kept, to be rejected with its reason, not dropped:
        # past the last value calamine read too (a formula with no saved result holds none).
        emptied = {problem.row for problem in self.problems}
        rows.extend([] for _ in range(len(rows), max(emptied, default=0)))
        while len(rows) > 1 and not any(rows[-1]) and len(rows) not in emptied:
            rows.pop()
        return rows


def _filled_width(texts: list[str]) -> int:
    """One past the last cell of a row holding anything."""
    for index in range(len(texts) - 1, -1, -1):
        if texts[index]:
            return index + 1
    return 0


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
