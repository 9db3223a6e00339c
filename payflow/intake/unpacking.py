"""What an XLSX archive may unpack to, checked in constant memory before any part is parsed.

openpyxl reads a cell's text, and the whole shared-strings table, into memory before any limit
of ours sees them: 600 KB of zipped XML holding one 600 MB cell took 1.35 GB to refuse. It also
holds an element of every tag it is given: a row of fifteen million `<c/>` in a 300 KB file
took 4.9 GB, and 60 MB of `<xf/>` in the styles more than 6.8 GB (`payflow.intake.xml_shape`).
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator

from payflow.intake.problems import BatchFileError
from payflow.intake.xml_shape import PartShape, part_shape

CHUNK_BYTES = 1 << 20
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


def member_chunks(archive: zipfile.ZipFile, path: str) -> Iterator[bytes]:
    """The unpacked bytes of one part, a megabyte at a time."""
    with archive.open(path) as member:
        while chunk := member.read(CHUNK_BYTES):
            yield chunk


def refuse_bombs(archive: zipfile.ZipFile, name: str, size: int, max_cell_chars: int) -> None:
    """Refuse an archive that unpacks past MAX_UNPACK_RATIO times its `size` (in bytes, or past
    MAX_ELEMENTS_PER_BYTE in elements), or any XML part holding a text longer than a cell may
    be, or more elements at once than a row: before openpyxl reads any of them into memory."""
    members = [info for info in archive.infolist() if not info.is_dir()]
    # Declared sizes bind: zipfile stops a part at its declared size (and fails its CRC).
    unpacked = sum(info.file_size for info in members)
    if unpacked > max(UNPACK_FLOOR_BYTES, MAX_UNPACK_RATIO * size):
        raise BatchFileError(
            f"{name} unpacks to {unpacked / 2**20:,.0f} MB from {size / 2**20:,.1f} MB, more than "
            f"{MAX_UNPACK_RATIO} times its size, {NOT_WRITTEN}"
        )
    bound = max_cell_chars * XML_BYTES_PER_CHAR
    elements, most_elements = 0, max(ELEMENTS_FLOOR, MAX_ELEMENTS_PER_BYTE * size)
    for info in members:
        parsed = not info.filename.startswith(NEVER_PARSED)
        limits = PartShape(
            longest_run=bound,
            most_text=bound,
            most_held=MAX_HELD_ELEMENTS if parsed else most_elements,
            elements=most_elements - elements,
            outside_text=MAX_OUTSIDE_TEXT_BYTES if parsed else UNPACK_FLOOR_BYTES,
            tail_held=MAX_TAIL_ELEMENTS if parsed else most_elements,
        )
        try:
            shape = part_shape(member_chunks(archive, info.filename), stop_past=limits)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError) as exc:
            raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
        if shape is None:
            continue
        _refuse_part(name, info.filename, shape, limits, max_cell_chars)
        elements += shape.elements
        if elements > most_elements:
            raise BatchFileError(
                f"{name} unpacks to more than {most_elements:,} XML elements from "
                f"{size / 2**20:,.1f} MB, more than {MAX_ELEMENTS_PER_BYTE} per byte, "
                f"{NOT_WRITTEN}"
            )


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
