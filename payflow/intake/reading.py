"""Reading a batch file (CSV or XLSX) into text cells indexed by the spreadsheet row number.

Every cell stays text: nothing is parsed, trimmed or reformatted here, except undoing Excel's
number storage (see `cells`). The batch id is the first 20 hex digits of the file's SHA-256.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from payflow.intake.columns import match_headers
from payflow.intake.problems import BatchFileError, Problem

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


def batch_id_of(data: bytes) -> str:
    """The same bytes always give the same id."""
    return hashlib.sha256(data).hexdigest()[:BATCH_ID_HEX]


def read_batch_file(path: str | Path, sheet: str | None = None) -> RawBatch:
    """Read a CSV or XLSX batch; raise BatchFileError when it cannot be read at all."""
    batch_id, name, frame, read_problems = read_text_table(path, sheet)
    return _raw_batch(batch_id, name, frame, read_problems)


def read_text_table(
    path: str | Path, sheet: str | None = None
) -> tuple[str, str, pd.DataFrame, list[Problem]]:
    """(batch id, file name, text cells with the header as given, cell problems) of a CSV or
    XLSX file, whatever its columns; BatchFileError when it cannot be read at all."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BatchFileError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    if not data.strip():
        raise BatchFileError(f"{path.name} is empty")
    if data.startswith(_OLE2_MAGIC):
        raise BatchFileError(
            f"{path.name} is a password-protected workbook or an old .xls file; "
            "save it as an unprotected .xlsx or as CSV"
        )
    if data.startswith(_ZIP_MAGIC):
        from payflow.intake.xlsx import read_xlsx_cells

        rows, read_problems = read_xlsx_cells(data, path.name, sheet)
        frame = _frame_from_rows(rows, path.name)
    else:
        if sheet is not None:
            raise BatchFileError(f"--sheet applies to XLSX files only; {path.name} is CSV")
        frame, read_problems = _read_csv(data, path.name), []
    return batch_id_of(data), path.name, frame, read_problems


def batch_from_rows(rows: list[list[str]], source_name: str = "rows") -> RawBatch:
    """A batch from text rows (header first), as if read from a file; for tests and callers."""
    data = json.dumps(rows, ensure_ascii=False).encode("utf-8")
    return _raw_batch(batch_id_of(data), source_name, _frame_from_rows(rows, source_name), [])


def _encoding(data: bytes, name: str) -> str:
    if b"\x00" in data[:4096]:
        raise BatchFileError(f"{name} is neither CSV nor XLSX")
    if data.startswith(_UTF8_BOM):
        return "utf-8-sig"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "cp1251"  # as saved by Russian Excel ("CSV (разделители - запятые)")
    return "utf-8"


def _delimiter(header_line: str) -> str:
    # Counted on the header only: names of columns contain neither delimiter.
    return ";" if header_line.count(";") > header_line.count(",") else ","


def _read_csv(data: bytes, name: str) -> pd.DataFrame:
    encoding = _encoding(data, name)
    first_line = data.split(b"\n", 1)[0].decode(encoding, errors="replace")
    try:
        frame = pd.read_csv(
            io.BytesIO(data),
            sep=_delimiter(first_line),
            encoding=encoding,
            header=None,  # taken from the first row below: pandas would rename duplicates
            dtype=str,
            na_filter=False,
            keep_default_na=False,
            skip_blank_lines=False,
            quoting=csv.QUOTE_MINIMAL,
        )
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise BatchFileError(f"{name} is not a readable CSV file: {message}") from None
    # With na_filter off every cell is a string already, short rows included.
    header = [str(c) for c in frame.iloc[0].tolist()]
    frame = frame.iloc[1:].reset_index(drop=True)
    frame.columns = header
    return frame


def _frame_from_rows(rows: list[list[str]], name: str) -> pd.DataFrame:
    if not rows:
        raise BatchFileError(f"{name} is empty")
    header, body = rows[0], rows[1:]
    width = len(header)
    body = [(r + [""] * width)[:width] for r in body]
    return pd.DataFrame(body, columns=[str(h) for h in header], dtype=str)


def _without_blank_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop rows with every cell empty (trailing ones above all): they carry no payout."""
    maybe = (frame["amount"] == "") & (frame["requisites"] == "")
    if not maybe.any():
        return frame  # the usual case, decided on two columns
    blank = pd.Series(False, index=frame.index)
    blank[maybe] = (frame[maybe] == "").all(axis=1)
    return frame[~blank]


def _raw_batch(batch_id: str, name: str, frame: pd.DataFrame, problems: list[Problem]) -> RawBatch:
    match = match_headers(list(frame.columns))
    if match.duplicated:
        raise BatchFileError(f"{name}: column {match.duplicated[0]} is given more than once")
    if match.missing_required:
        missing = ", ".join(match.missing_required)
        raise BatchFileError(f"{name}: required column missing: {missing}")
    frame = frame[list(match.renames)].rename(columns=match.renames)
    frame.index = pd.RangeIndex(FIRST_DATA_ROW, FIRST_DATA_ROW + len(frame))
    frame = _without_blank_rows(frame)
    if frame.empty:
        raise BatchFileError(f"{name} has a header but no data rows")
    problems = [replace(p, column=match.renames.get(p.column, p.column)) for p in problems]
    return RawBatch(batch_id, name, frame, match.unknown, problems)
