"""Reading a batch file (CSV or XLSX) into text cells indexed by the spreadsheet row number.

Every cell stays text: nothing is parsed, trimmed or reformatted here, except undoing Excel's
number storage (see `cells`). The batch id is the first 20 hex digits of the file's SHA-256.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from payflow.intake.amounts import read_decimal_commas
from payflow.intake.columns import MISREAD_BOMS, PAYOUT_COLUMNS, ReadColumns, match_headers
from payflow.intake.headers import (
    SCANNED_ROWS,
    MissingColumns,
    missing_columns_error,
    payout_columns_missing,
)
from payflow.intake.limits import ReadLimits
from payflow.intake.problems import FILE_ROW, BatchFileError, Problem
from payflow.opening import UnreadableFile, empty_file, read_file
from payflow.wording import counted

BATCH_ID_HEX = 20
FIRST_DATA_ROW = 2  # the header is row 1, as the operator sees it
_ZIP_MAGIC = b"PK\x03\x04"
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .xls, or an encrypted .xlsx
_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class RawBatch:
    """Text cells of one batch file: columns renamed to the canonical names, index = row number."""

    batch_id: str
    source_name: str
    frame: pd.DataFrame
    unknown_columns: tuple[str, ...] = ()
    read_problems: list[Problem] = field(default_factory=list)
    notices: list[Problem] = field(default_factory=list)  # how cells were read (warnings)
    sheet: str | None = None  # the XLSX sheet read (None for a CSV)


def batch_id_of(data: bytes, sheet: str | None = None) -> str:
    """The same bytes (and sheet, when not the workbook's first) always give the same id."""
    digest = hashlib.sha256(data)
    if sheet is not None:  # another sheet of the same file is another batch
        digest.update(b"\x00sheet:" + sheet.encode("utf-8"))
    return digest.hexdigest()[:BATCH_ID_HEX]


def read_batch_file(
    path: str | Path, sheet: str | None = None, *, limits: ReadLimits | None = None
) -> RawBatch:
    """Read a CSV or XLSX batch; raise BatchFileError when it cannot be read at all."""
    table = read_table(path, sheet, limits=limits, missing_columns=payout_columns_missing)
    return _raw_batch(
        table.batch_id,
        table.source_name,
        table.frame,
        table.read_problems,
        decimal_comma=table.decimal_comma,
        notices=table.notices,
        sheet=table.sheet,
    )


@dataclass
class RawTable:
    """Text cells of a CSV or XLSX file under its own headers, before any column matching."""

    batch_id: str
    source_name: str
    frame: pd.DataFrame
    read_problems: list[Problem] = field(default_factory=list)
    decimal_comma: bool = False  # a `;` CSV, where Russian Excel writes `1 500,50`
    notices: list[Problem] = field(default_factory=list)  # how the file was read (warnings)
    sheet: str | None = None  # the XLSX sheet read (None for a CSV)


def read_table(
    path: str | Path,
    sheet: str | None = None,
    *,
    limits: ReadLimits | None = None,
    missing_columns: MissingColumns | None = None,
    columns: ReadColumns = PAYOUT_COLUMNS,
) -> RawTable:
    """The cells of any batch file (payouts, refunds, links, corrections) as text;
    BatchFileError when unreadable. `missing_columns` lets an XLSX header be refused early;
    `columns` (those the caller reads) are where an XLSX's hidden or merged cells, dates and
    formula errors are read problems."""
    path = Path(path)
    limits = limits or ReadLimits.configured()
    try:
        data = read_file(path)
    except UnreadableFile as exc:
        raise BatchFileError(str(exc)) from None
    except OSError as exc:  # opened, then failed while read (an I/O error)
        raise BatchFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data.isspace():  # as `not data.strip()`, without copying the file
        raise BatchFileError(empty_file(path.name))
    if data.startswith(_OLE2_MAGIC):
        raise BatchFileError(
            f"{path.name} is a password-protected workbook or an old .xls file; "
            "save it as an unprotected .xlsx or as CSV"
        )
    if data.startswith(_ZIP_MAGIC):
        from payflow.intake.xlsx import read_xlsx_cells

        rows, read_problems, read = read_xlsx_cells(
            data, path.name, sheet, limits, missing_columns, columns
        )
        frame = _frame_from_rows(rows, path.name)
        # The first sheet's id is the file's own, as it was before sheets could be chosen.
        batch_id = batch_id_of(data, None if read.first else read.title)
        return RawTable(batch_id, path.name, frame, read_problems, sheet=read.title)
    if sheet is not None:
        raise BatchFileError(f"--sheet applies to XLSX files only; {path.name} is CSV")
    frame, delimiter, encoding = _read_csv(data, path.name, limits)
    notices = [LEGACY_ENCODING_NOTICE] if encoding == LEGACY_ENCODING else []
    return RawTable(
        batch_id_of(data), path.name, frame, [], decimal_comma=delimiter == ";", notices=notices
    )


def batch_from_rows(rows: list[list[str]], source_name: str = "rows") -> RawBatch:
    """A batch from text rows (header first), as if read from a file; for tests and callers."""
    data = json.dumps(rows, ensure_ascii=False).encode("utf-8")
    return _raw_batch(batch_id_of(data), source_name, _frame_from_rows(rows, source_name), [])


LEGACY_ENCODING = "cp1251"
LEGACY_ENCODING_NOTICE = Problem(
    FILE_ROW,
    "",
    "read_as_windows_1251",
    "the file is not UTF-8: it was read as Windows-1251, as Russian Excel saves CSV; a name in "
    "another alphabet may read wrong (Jöhn as Jцhn): check the names, or save the file as "
    "'CSV UTF-8'",
)


UTF16_TEXT = (
    "{name} is UTF-16 text (what Excel's 'Unicode Text' saves), not a CSV payflow reads: open it "
    "and save it as 'CSV UTF-8 (Comma delimited)' or as an Excel Workbook (.xlsx)"
)


def _encoding(data: bytes, name: str) -> str:
    """The encoding to try first; a file that is not UTF-8 after all is read again as
    Windows-1251 by `_read_csv`."""
    head = data[:4096]
    if b"\x00" in head:
        if _is_utf16(head):
            raise BatchFileError(UTF16_TEXT.format(name=name))
        raise BatchFileError(f"{name} is neither CSV nor XLSX")
    return "utf-8-sig" if data.startswith(_UTF8_BOM) else "utf-8"


def _is_utf16(head: bytes) -> bool:
    """A UTF-16 byte order mark, or a NUL in every other byte (Latin text without a mark)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    halves = head[0::2], head[1::2]
    return any(half and half.count(0) >= 0.9 * len(half) for half in halves)


def _delimiter(header_line: str) -> str:
    # Counted on the header only: names of columns contain neither delimiter.
    return ";" if header_line.count(";") > header_line.count(",") else ","


def _read_csv(data: bytes, name: str, limits: ReadLimits) -> tuple[pd.DataFrame, str, str]:
    """The cells, the delimiter and the encoding the file was read in."""
    encoding = _encoding(data, name)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise BatchFileError(
            f"{name} holds a NUL byte on line {line}: it is not a text CSV; "
            "save it again from the spreadsheet as CSV or XLSX"
        )
    # A line ends in CR LF, LF or a lone CR (as the parser reads them): counted on LF alone, a
    # file saved with CR line ends was one line, and a stray quote in it swallowed rows unseen.
    carriage_returns = data.count(b"\r")
    breaks = data.count(b"\n") + carriage_returns
    if carriage_returns:  # a scan for a two-byte pattern, only in files that need it
        breaks -= data.count(b"\r\n")
    lines = breaks + (0 if data.endswith((b"\n", b"\r")) else 1)
    limits.check_rows(name, lines - 1)
    first_end = min((i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0), default=len(data))
    first_line = data[:first_end].decode(encoding, errors="replace")
    delimiter = _delimiter(first_line)
    # Counted before parsing: pandas would build every column of a million-column header.
    limits.check_columns(name, first_line.count(delimiter) + 1)
    try:
        try:
            frame = _parse_csv(data, delimiter, encoding)
        except UnicodeDecodeError:
            if encoding != "utf-8":
                raise
            # The parser decodes every cell strictly, so it is the UTF-8 check: decoding the
            # whole file first to find out took longer than parsing it (0.8 s a million rows).
            encoding = LEGACY_ENCODING  # as saved by Russian Excel ("CSV (разделители - запятые)")
            frame = _parse_csv(data, delimiter, encoding)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise BatchFileError(_unreadable_csv(name, exc)) from None
    # With na_filter off every cell is a string already, short rows included.
    header = [str(c) for c in frame.iloc[0].tolist()]
    frame = frame.iloc[1:].reset_index(drop=True)
    frame.columns = header
    spanning = len(frame) + 1 < lines  # some quoted cell holds a line break
    # A cell is never longer than its line, and a line of n bytes holds at most n characters:
    # when no line passes the limit, no cell can, and a million rows skip a per-cell scan.
    if spanning or _longest_line(data) > limits.max_cell_chars:
        _check_cells(frame, name, limits)
    if spanning:
        _check_swallowed_lines(frame, name, delimiter)
    return frame, delimiter, encoding


def _parse_csv(data: bytes, delimiter: str, encoding: str) -> pd.DataFrame:
    return pd.read_csv(
        io.BytesIO(data),
        sep=delimiter,
        encoding=encoding,
        header=None,  # taken from the first row below: pandas would rename duplicates
        dtype=str,
        na_filter=False,
        keep_default_na=False,
        skip_blank_lines=False,
        quoting=csv.QUOTE_MINIMAL,
    )


_LINE_SCAN_BYTES = 1 << 24
_OPEN_QUOTE = re.compile(r"EOF inside string starting at row (\d+)")
_TOO_MANY = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _unreadable_csv(name: str, exc: Exception) -> str:
    """The parser's complaint in an operator's words (its own text was "Error tokenizing data.
    C error: EOF inside string starting at row 1" for a stray quote on line 2)."""
    text = str(exc).strip()
    if isinstance(exc, pd.errors.EmptyDataError):
        return empty_file(name)
    if found := _OPEN_QUOTE.search(text):
        opened = int(found.group(1)) + 1  # the parser counts rows from 0
        return (
            f"{name}: a quote opened on line {opened} is never closed, so every line below it "
            "would be read as one cell; close or remove that quote"
        )
    if found := _TOO_MANY.search(text):
        header, where, cells = found.groups()
        return (
            f"{name}: line {where} has {cells} cells but the header has {header}: a delimiter "
            "inside a cell that is not in quotes?"
        )
    message = text.splitlines()[-1] if text else type(exc).__name__
    return f"{name} is not a readable CSV file: {message}"


def _longest_line(data: bytes) -> int:
    """Bytes in the longest line of `data`, its line break included."""
    longest, start = 0, 0
    # In slices, so the scan adds a few MB, not a byte per byte of the file.
    for offset in range(0, len(data), _LINE_SCAN_BYTES):
        chunk = np.frombuffer(data, np.uint8, min(_LINE_SCAN_BYTES, len(data) - offset), offset)
        ends = np.flatnonzero(chunk == 0x0A) + offset
        if len(ends):
            longest = max(longest, int(ends[0]) + 1 - start, int(np.diff(ends).max(initial=0)))
            start = int(ends[-1]) + 1
    return max(longest, len(data) - start)


def _check_cells(frame: pd.DataFrame, name: str, limits: ReadLimits) -> None:
    for position, column in enumerate(frame.columns):
        lengths = frame.iloc[:, position].str.len()
        if len(lengths) and int(lengths.max()) > limits.max_cell_chars:
            row = int(lengths.to_numpy().argmax()) + FIRST_DATA_ROW
            limits.check_cell(name, row, str(column), int(lengths.max()))


def _check_swallowed_lines(frame: pd.DataFrame, name: str, delimiter: str) -> None:
    """Fewer rows than lines: some quoted cell spans lines. A cell that also holds the delimiter
    swallowed whole rows (an unbalanced quote), and those rows must not vanish silently."""
    for position, column in enumerate(frame.columns):
        cells = frame.iloc[:, position]
        spanning = cells.str.contains("[\r\n]", regex=True)
        for offset in spanning.to_numpy().nonzero()[0].tolist():
            text = str(cells.iloc[offset])
            if delimiter in text:
                breaks = text.count("\n") or text.count("\r")
                raise BatchFileError(
                    f"{name}: row {offset + FIRST_DATA_ROW}, column {column!r} opens a quote "
                    f"that runs over {breaks} line break(s) and swallows the rows below it; "
                    'remove the stray quote (") or close it'
                )


def _frame_from_rows(rows: list[list[str]], name: str) -> pd.DataFrame:
    if not rows:
        raise BatchFileError(empty_file(name))
    header, body = rows[0], rows[1:]
    width = len(header)
    body = [r if len(r) == width else (r + [""] * width)[:width] for r in body]
    return pd.DataFrame(body, columns=[str(h) for h in header], dtype=str)


def without_blank_rows(
    frame: pd.DataFrame, problems: Sequence[Problem], probe: Sequence[str] = ()
) -> pd.DataFrame:
    """Drop rows with every cell empty (trailing ones above all): they carry nothing to send. A
    row that only a read problem emptied (a #N/A, a formula with no saved result) stays, to be
    rejected with its reason, never lost. `probe`: columns nearly every row fills, tested first."""
    emptied = {problem.row for problem in problems}
    maybe = pd.Series(True, index=frame.index)
    for column in probe:
        # The object array's compare: a quarter of the time of the string Series' own.
        maybe &= frame[column].to_numpy(dtype=object, copy=False) == ""
    if not maybe.any():
        return frame  # the usual case, decided on the probed columns
    blank = pd.Series(False, index=frame.index)
    blank[maybe] = (frame[maybe] == "").all(axis=1)
    blank[blank.index.isin(list(emptied))] = False
    return frame[~blank]


def _refuse_misread_encoding(name: str, headers: list[str]) -> None:
    """A header starting `ï»¿` is a UTF-8 file that a spreadsheet opened as Windows-1252 (or as
    Windows-1251: `п»ї`) and saved: its externalId column went unrecognised, so its rows would be
    paid under derived ids, and its names garbled (Иван as Ð˜Ð²Ð°Ð½)."""
    for header in headers[:1]:
        if header.startswith(MISREAD_BOMS):
            raise BatchFileError(
                f"{name}: the first header reads {header.strip()!r}: the file was opened in the "
                "wrong encoding and saved again, so its names are garbled too; open the original "
                "CSV again choosing UTF-8 (or save it as 'CSV UTF-8') and use that"
            )


def _raw_batch(
    batch_id: str,
    name: str,
    frame: pd.DataFrame,
    problems: list[Problem],
    *,
    decimal_comma: bool = False,
    notices: Sequence[Problem] = (),
    sheet: str | None = None,
) -> RawBatch:
    _refuse_misread_encoding(name, list(frame.columns))
    match = match_headers(list(frame.columns))
    if match.duplicated:
        raise BatchFileError(f"{name}: column {match.duplicated[0]} is given more than once")
    if match.missing_required:
        top = [[str(c) for c in row] for row in frame.head(SCANNED_ROWS).itertuples(index=False)]
        raise missing_columns_error(name, list(frame.columns), top, match.missing_required)
    unnamed = _unnamed_with_values(frame)
    frame = frame[list(match.renames)].rename(columns=match.renames)
    frame.index = pd.RangeIndex(FIRST_DATA_ROW, FIRST_DATA_ROW + len(frame))
    frame = without_blank_rows(frame, problems, probe=("amount", "requisites"))
    if frame.empty:
        raise BatchFileError(f"{name} has a header but no data rows")
    problems = [replace(p, column=match.renames.get(p.column, p.column)) for p in problems]
    read_as = list(notices)
    if decimal_comma:
        frame, comma_notices, thousands_points = read_decimal_commas(frame)
        read_as += comma_notices
        problems += thousands_points
    return RawBatch(batch_id, name, frame, (*match.unknown, *unnamed), problems, read_as, sheet)


def _unnamed_with_values(frame: pd.DataFrame) -> tuple[str, ...]:
    """Columns with no header that hold values, named by position: a serviceId whose header was
    forgotten is not read, and the rows went through the merchant's default with no word."""
    return tuple(
        f"column {position + 1} (no header, {counted(filled, 'value')})"
        for position, header in enumerate(frame.columns)
        if not str(header).strip() and (filled := int((frame.iloc[:, position] != "").sum()))
    )
