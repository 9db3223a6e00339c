"""What an XLSX archive may unpack to, checked in constant memory before any part is parsed.

openpyxl reads a cell's text, and the whole shared-strings table, into memory before any limit
of ours sees them: 600 KB of zipped XML holding one 600 MB cell took 1.35 GB to refuse. It also
holds an element of every tag it is given: a row of fifteen million `<c/>` in a 300 KB file
took 4.9 GB, and 60 MB of `<xf/>` in the styles more than 6.8 GB (`payflow.intake.xml_shape`).
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Literal

from payflow.intake.problems import BatchFileError
from payflow.intake.xml_shape import PartShape, part_shape

CHUNK_BYTES = 1 << 20
# A sheet's part is read by its survey in pieces cut before a tag: held in a few copies at once.
READ_CHECKED_BYTES = 1 << 18
# Spreadsheet programs zip their XML 4 to 25 times smaller (21 for 100,000 identical rows);
# a bomb, 1,000 times. Below the floor any ratio passes: a small file with a bloated styles part.
MAX_UNPACK_RATIO = 100
UNPACK_FLOOR_BYTES = 64 << 20
# The most bytes one character can take in XML (`&#x10FFFF;`), so no cell within the character
# limit is refused, however it is written; the limit itself is checked with row and column later.
XML_BYTES_PER_CHAR = 10
# Elements, as bytes above: LibreOffice writes 0.5 per byte of the file for 100,000 rows (2.3
# million in 5 MB), about 1 for identical rows; `<si/>` repeated, 40. Each costs openpyxl 100 to
# 300 bytes, and a row or shared string it has read stays behind as an empty element.
MAX_ELEMENTS_PER_BYTE = 8
ELEMENTS_FLOOR = 2_000_000
# Elements openpyxl holds at once: those of one row or shared string, or of a part it reads
# whole (the styles). A row spans at most 16,384 columns; Excel's styles, 64,000 formats.
MAX_HELD_ELEMENTS = 1 << 18
# What openpyxl keeps of a sheet's tail after its rows, an object per link, conditional format or
# merged range (1 to 4 KB of memory each, measured): a link on each of 500,000 rows is ordinary,
# and this many cost about what reading the most rows does (800 MB).
MAX_TAIL_ELEMENTS = 1 << 19
# Text outside any cell (a workbook's defined names, a sheet's conditional formats): 30,000
# defined names passed the bound of one cell's text; each stretch is still bounded as a cell.
MAX_OUTSIDE_TEXT_BYTES = 16 << 20
# Parts the read-only reader never parses (pivot caches; linked workbooks, as `_open` asks
# openpyxl to skip them): as big as the data they summarise, and held by nothing.
NEVER_PARSED = ("xl/pivotCache/", "xl/externalLinks/")
NOT_WRITTEN = (
    "which no spreadsheet program writes: it is not read; save it again from Excel or "
    "LibreOffice, or as CSV"
)


def member_chunks(archive: zipfile.ZipFile, path: str, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The unpacked bytes of one part, `size` bytes (a megabyte) at a time."""
    with archive.open(path) as member:
        while chunk := member.read(size):
            yield chunk


def refuse_bombs(archive: zipfile.ZipFile, name: str, size: int, max_cell_chars: int) -> None:
    """Refuse an archive that unpacks past MAX_UNPACK_RATIO times its `size` (in bytes, or past
    MAX_ELEMENTS_PER_BYTE in elements), or any XML part holding a text longer than a cell may
    be, or more elements at once than a row: before openpyxl reads any of them into memory."""
    BombCheck(archive, name, size, max_cell_chars).check_rest()


class BombCheck:
    """`refuse_bombs` a part at a time. A sheet's part may be left for `read_checked`, which
    checks it and then reads it once for the survey and the hidden-row and formula scan;
    `check_rest` then checks what is left, and must run before anything else parses the
    archive's parts (`CheckedArchive` checks a part openpyxl opens before it reads it)."""

    def __init__(self, archive: zipfile.ZipFile, name: str, size: int, max_cell_chars: int):
        self.archive, self.name, self.size = archive, name, size
        self.max_cell_chars = max_cell_chars
        members = [info for info in archive.infolist() if not info.is_dir()]
        # Declared sizes bind: zipfile stops a part at its declared size (and fails its CRC).
        unpacked = sum(info.file_size for info in members)
        if unpacked > max(UNPACK_FLOOR_BYTES, MAX_UNPACK_RATIO * size):
            raise BatchFileError(
                f"{name} unpacks to {unpacked / 2**20:,.0f} MB from {size / 2**20:,.1f} MB, more "
                f"than {MAX_UNPACK_RATIO} times its size, {NOT_WRITTEN}"
            )
        self.unchecked = {info.filename: info for info in members}
        self.elements, self.most_elements = 0, max(ELEMENTS_FLOOR, MAX_ELEMENTS_PER_BYTE * size)

    def check_rest(self, *, leaving: Callable[[str], bool] = lambda part: False) -> None:
        """Check every part not checked yet, in the archive's order, but those `leaving` names."""
        for part in list(self.unchecked):
            if not leaving(part):
                self.check(part)

    def check(self, part: str) -> None:
        """Check one part (nothing when it was checked, or is being read by `read_checked`)."""
        limits = self._claim(part)
        if limits is None:
            return
        try:
            shape = part_shape(member_chunks(self.archive, part), stop_past=limits)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError) as exc:
            raise self._corrupt(exc) from None
        self._judge(part, shape, limits)

    def read_checked(self, part: str, take: Callable[[bytes], None]) -> None:
        """Check the part (unless checked), then give `take` its bytes in pieces, each ending
        before a tag (a cell's, where one starts in the piece). The verdict comes first: the
        bounds are the whole part's, and bytes within them so far are no verdict (a sheet of
        nested tags, refused at its 262,145th, took expat 40 MB before it)."""
        self.check(part)
        try:
            for piece in whole_cells(member_chunks(self.archive, part, READ_CHECKED_BYTES)):
                take(piece)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError) as exc:
            raise self._corrupt(exc) from None

    def _claim(self, part: str) -> PartShape | None:
        """The bounds of a part not checked yet, now taken off the unchecked (so that reading
        it does not check it again); None for one checked or being read."""
        info = self.unchecked.pop(part, None)
        if info is None:
            return None
        bound = self.max_cell_chars * XML_BYTES_PER_CHAR
        parsed = not info.filename.startswith(NEVER_PARSED)
        return PartShape(
            longest_run=bound,
            most_text=bound,
            most_held=MAX_HELD_ELEMENTS if parsed else self.most_elements,
            elements=self.most_elements - self.elements,
            outside_text=MAX_OUTSIDE_TEXT_BYTES if parsed else UNPACK_FLOOR_BYTES,
            tail_held=MAX_TAIL_ELEMENTS if parsed else self.most_elements,
        )

    def _judge(self, part: str, shape: PartShape | None, limits: PartShape) -> None:
        if shape is None:
            return
        _refuse_part(self.name, part, shape, limits, self.max_cell_chars)
        self.elements += shape.elements
        if self.elements > self.most_elements:
            raise BatchFileError(
                f"{self.name} unpacks to more than {self.most_elements:,} XML elements from "
                f"{self.size / 2**20:,.1f} MB, more than {MAX_ELEMENTS_PER_BYTE} per byte, "
                f"{NOT_WRITTEN}"
            )

    def _corrupt(self, exc: Exception) -> BatchFileError:
        return BatchFileError(f"{self.name} is a corrupt or unsupported workbook ({exc})")


class CheckedArchive(zipfile.ZipFile):
    """An archive whose parts are checked for bombs (`checks`) before any is opened: openpyxl
    then never parses a part left for `BombCheck.read_checked`, wherever the workbook puts it."""

    checks: BombCheck | None = None

    def open(
        self,
        name: str | zipfile.ZipInfo,
        mode: Literal["r", "w"] = "r",
        pwd: bytes | None = None,
        *,
        force_zip64: bool = False,
    ) -> IO[bytes]:
        if self.checks is not None and mode == "r":
            self.checks.check(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return super().open(name, mode, pwd, force_zip64=force_zip64)


def whole_cells(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The bytes of `chunks` in pieces that each end before a '<', before a cell's when one
    starts in the piece: no tag, and no cell, is cut between two."""
    tail = b""
    for chunk in chunks:
        text = tail + chunk
        cut = text.rfind(b"<c")
        if cut <= 0:
            cut = text.rfind(b"<")
        if cut <= 0:
            tail = text
            continue
        tail = text[cut:]
        yield text[:cut]
    if tail:
        yield tail


def _refuse_part(
    name: str, part: str, shape: PartShape, limits: PartShape, max_cell_chars: int
) -> None:
    if shape.declaration:
        raise BatchFileError(
            f"{name}: its part {part} declares a document type or entities (<!DOCTYPE), "
            f"{NOT_WRITTEN}"
        )
    if shape.longest_run > limits.longest_run or shape.most_text > limits.most_text:
        raise BatchFileError(
            f"{name}: its part {part} holds a text of more than {limits.most_text:,} bytes, "
            f"longer than any cell may be ({max_cell_chars:,} characters, "
            "PAYFLOW_MAX_CELL_CHARS): it is not read"
        )
    if shape.outside_text > limits.outside_text:
        raise BatchFileError(
            f"{name}: its part {part} holds more than {limits.outside_text:,} bytes of text "
            f"outside its cells, {NOT_WRITTEN}"
        )
    if shape.most_held > limits.most_held:
        raise BatchFileError(
            f"{name}: its part {part} holds more than {limits.most_held:,} XML elements in one "
            f"row or shared string (or outside any), {NOT_WRITTEN}"
        )
    if shape.tail_held > limits.tail_held:
        raise BatchFileError(
            f"{name}: its part {part} holds more than {limits.tail_held:,} XML elements after "
            "its rows (links, conditional formats, merged cells), more than payflow reads: "
            "remove them, or save the sheet as CSV"
        )
