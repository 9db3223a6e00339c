"""The fast read of a plain XLSX sheet: python-calamine (Rust) reads the values, and one streamed
survey of the sheet's XML vouches for the sheet first and finds what decides a value's meaning.

openpyxl took 6.5 s to iterate a 100,000-row sheet; calamine reads it in about half a second.
But calamine holds the whole sheet as one grid as wide and as tall as its farthest cell (a cell
at XFD200000 asked it for 100 GB and aborted the process), and it has no number formats. So the
survey, a scan of the XML at C speed, reads the sheet only when every cell names its place
(`r="B7"`), none lies past FAST_COLUMNS or FAST_ROWS, and none is an error or an ISO date
(`t="e"`, `t="d"`); it decodes, as openpyxl does, the cells whose style shows a date or a
number format that may show another number than the cell holds. Anything else (a cell calamine
reads as a date where openpyxl would not, two visible sheets, a header lacking columns) returns
None, and the caller reads the sheet with openpyxl as before: the fast path only ever gives what
openpyxl would have given. The archive was already checked for bombs (`refuse_bombs`).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from xml.parsers import expat

from openpyxl.reader.excel import ExcelReader
from openpyxl.styles.numbers import BUILTIN_FORMATS, BUILTIN_FORMATS_MAX_SIZE
from openpyxl.styles.stylesheet import apply_stylesheet
from openpyxl.utils.cell import column_index_from_string, get_column_letter
from openpyxl.utils.datetime import from_excel
from openpyxl.xml.constants import SHARED_STRINGS

from payflow.intake.limits import ReadLimits
from payflow.intake.unpacking import BombCheck, member_chunks
from payflow.intake.xlsx_scan import SheetScan

# The grid calamine may be asked for: 200,000 rows of 64 columns is at most 13 million cells
# (about 400 MB); a sheet reaching past either is read by openpyxl, a row at a time.
FAST_ROWS = 200_000
FAST_COLUMNS = 64
_VALUE = re.compile(rb"<v>([^<]*)</v>")
_TYPE = re.compile(rb'\st="(\w+)"')
_FORMULA = re.compile(rb"<f[\s>/]")
# An error or an ISO date (openpyxl's to read), or a prefixed tag (`<x:c`) the survey's
# patterns would not see.
_UNVOUCHED = (b't="e"', b't="d"', b":c ", b":row")
# A cell that does not name its place first (`<c>`, `<c t="s" r="A1">`): calamine would place it
# by counting, past any bound the survey checks.
_UNPLACED = re.compile(rb'<c(?:[>/\t\r\n]| (?!r="))')


@dataclass(frozen=True, slots=True)
class Special:
    """A cell whose style decides what its number means: its value as openpyxl reads it (a
    date or time for a date format) and its number format."""

    value: Any
    number_format: str


@dataclass(frozen=True, slots=True)
class PlainSheet:
    """A sheet calamine may read: its title, its part and its special cells by (row, column),
    both counted from 1."""

    title: str
    path: str
    first: bool
    specials: dict[tuple[int, int], Special]
    scan: SheetScan


class Styles:
    """What each cell style (its `s` index) means for a number: its format, and whether it shows
    a date or a duration, as openpyxl decides them."""

    def __init__(self, reader: ExcelReader) -> None:
        workbook: Any = reader.wb  # the stylesheet's indexes live in private fields
        apply_stylesheet(reader.archive, workbook)
        self.epoch = workbook.epoch
        self.dates: set[int] = set(workbook._date_formats)
        self.durations: set[int] = set(workbook._timedelta_formats)
        custom = list(workbook._number_formats)
        self.formats: list[str] = []
        for style in workbook._cell_styles:
            number = style.numFmtId
            if number < BUILTIN_FORMATS_MAX_SIZE:
                self.formats.append(BUILTIN_FORMATS.get(number, "General"))
            else:
                self.formats.append(custom[number - BUILTIN_FORMATS_MAX_SIZE])

    def special(self, shows_another: Callable[[str], bool]) -> set[int]:
        """The styles whose numbers read as dates or may show another number than they hold."""
        return self.dates | {i for i, f in enumerate(self.formats) if shows_another(f)}


def plain_sheet(
    reader: ExcelReader,
    sheet: str | None,
    limits: ReadLimits,
    shows_another: Callable[[str], bool],
    checks: BombCheck,
) -> PlainSheet | None:
    """The sheet to read, if calamine may read it (see the module's doc); None otherwise. The
    sheet's part is read once, by `checks` (its bomb scan), for the survey and for the scan of
    what its cells do not show (`SheetScan`)."""
    reader.read_manifest()
    reader.read_workbook()
    found = list(reader.parser.find_sheets())
    if any("chartsheet" in rel.Type or rel.target not in reader.valid_files for _, rel in found):
        return None
    names = [sheet_xml.name for sheet_xml, _ in found]
    if sheet is None:
        visible = [(s, rel) for s, rel in found if s.state == "visible"]
        if len(visible) != 1:
            return None  # none, or several to choose from: openpyxl's reader says which
        chosen, rel = visible[0]
    elif sheet in names:
        chosen, rel = found[names.index(sheet)]
    else:
        return None
    styles = Styles(reader)
    special = styles.special(shows_another)
    if 0 in special:  # a cell with no `s` has style 0: the survey finds styled cells only
        return None
    columns = min(limits.max_columns + 1, FAST_COLUMNS)
    strings = reader.package.find(SHARED_STRINGS)  # type: ignore[no-untyped-call]
    if strings is not None and not _well_formed(reader.archive, strings.PartName[1:]):
        return None  # a string calamine skipped would shift every later one to another cell
    survey, scan = _Survey(styles, special, columns), SheetScan()

    def take(piece: bytes) -> None:
        survey.take(piece)
        scan.take(piece)

    checks.read_checked(rel.target, take)
    specials = survey.finish()
    if specials is None:
        return None
    return PlainSheet(chosen.name, rel.target, chosen.name == names[0], specials, scan)


def _well_formed(archive: zipfile.ZipFile, path: str) -> bool:
    """Whether a part is well-formed XML, as openpyxl's parser needs it: calamine's is lenient,
    and would read past a broken tag (a cell or a shared string of it left out)."""
    parser = expat.ParserCreate()
    try:
        for piece in member_chunks(archive, path):
            parser.Parse(piece, False)
        parser.Parse(b"", True)
    except (expat.ExpatError, KeyError):
        return False
    return True


def _greater(limit: str, alphabet: str) -> bytes:
    """A pattern of the strings over `alphabet` (in its order, no leading zero) past `limit`:
    longer ones, or as long and greater at the first place they differ."""
    every = f"[{alphabet[0]}-{alphabet[-1]}]"
    options = [f"{every}{{{len(limit) + 1},}}"]
    for place, char in enumerate(limit):
        after = alphabet[alphabet.index(char) + 1 :]
        if after:
            rest = f"{every}{{{len(limit) - place - 1}}}"
            options.append(f"{re.escape(limit[:place])}[{after[0]}-{after[-1]}]{rest}")
    return "|".join(options).encode()


class _Survey:
    """The special cells of a sheet calamine may read, from its XML given a piece at a time,
    each ending before a tag and no cell cut (`BombCheck.read_checked`); or the verdict that
    calamine may not read it."""

    def __init__(self, styles: Styles, special: set[int], columns: int) -> None:
        self.styles, self.special = styles, special
        self.past = re.compile(
            rb'<c r="(?:(?:'
            + _greater(get_column_letter(columns), "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            + rb")[0-9]|[A-Z]{1,3}(?:"
            + _greater(str(FAST_ROWS), "0123456789")
            + rb')")'
        )
        ids = b"|".join(str(i).encode() for i in sorted(special, reverse=True))
        self.styled = re.compile(
            rb'<c r="([A-Z]{1,3})([0-9]+)"(?=[^>]*?\ss="(?:'
            + ids
            + rb')")([^>]*?)(?:/>|>(.*?)</c>)',
            re.S,
        )
        self.specials: dict[tuple[int, int], Special] | None = {}
        self.parser = expat.ParserCreate()  # well-formed, as openpyxl's parser needs it

    def take(self, piece: bytes) -> None:
        if self.specials is None:
            return  # refused: the rest of the sheet is read for the bomb scan and SheetScan
        try:
            self.parser.Parse(piece, False)
        except expat.ExpatError:
            self.specials = None
            return
        if any(mark in piece for mark in _UNVOUCHED) or _UNPLACED.search(piece):
            self.specials = None
            return
        if self.past.search(piece):
            self.specials = None  # a cell past the grid calamine may be asked for
            return
        specials = self.specials
        for match in self.styled.finditer(piece) if self.special else ():
            found = _decoded(match, self.styles)
            if found is None:
                self.specials = None
                return
            place, cell = found
            specials[place] = cell

    def finish(self) -> dict[tuple[int, int], Special] | None:
        """The special cells by (row, column), or None when calamine may not read the sheet."""
        if self.specials is not None:
            try:
                self.parser.Parse(b"", True)
            except expat.ExpatError:
                return None
        return self.specials


def _decoded(match: re.Match[bytes], styles: Styles) -> tuple[tuple[int, int], Special] | None:
    """One special cell as openpyxl reads it (data_only): a number, a date for a date style;
    another type (text, a boolean) is calamine's to read."""
    letters, row, attributes, body = match.groups()
    style = int(re.search(rb'\ss="([0-9]+)"', match.group(0)).group(1))  # type: ignore[union-attr]
    kind = _TYPE.search(attributes)
    place = (int(row), column_index_from_string(letters.decode()))
    number_format = styles.formats[style]
    if kind is not None and kind.group(1) != b"n":
        return place, Special(CALAMINE_READS, number_format)
    held = _VALUE.search(body or b"")
    if held is None or not held.group(1):
        return place, Special(None, number_format)
    text = held.group(1).decode()
    value: Any = float(text) if any(c in text for c in ".Ee") else int(text)
    if style in styles.dates:
        try:
            value = from_excel(value, styles.epoch, timedelta=style in styles.durations)
        except (OverflowError, ValueError):
            return None  # openpyxl reads it as an error: its reader says so
    return place, Special(value, number_format)


# A special cell whose value calamine reads (text, a boolean under a number format).
CALAMINE_READS = object()


def calamine_rows(data: bytes, title: str) -> list[list[Any]] | None:
    """Every row of the sheet from A1, as calamine reads it; None when calamine cannot."""
    from python_calamine import CalamineWorkbook

    try:
        workbook = CalamineWorkbook.from_filelike(io.BytesIO(data))
        rows: list[list[Any]] = workbook.get_sheet_by_name(title).to_python(skip_empty_area=False)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a Rust panic is no Exception: openpyxl's reader names the fault
        return None
    return rows


__all__ = ["CALAMINE_READS", "FAST_COLUMNS", "FAST_ROWS", "PlainSheet", "Special"]
