"""What an XLSX archive may unpack to, checked in constant memory before any part is parsed.

openpyxl reads a cell's text, and the whole shared-strings table, into memory before any limit
of ours sees them: 600 KB of zipped XML holding one 600 MB cell took 1.35 GB to refuse.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator

import numpy as np

from payflow.intake.problems import BatchFileError

CHUNK_BYTES = 1 << 20
# Spreadsheet programs zip their XML 4 to 25 times smaller (21 for 100,000 identical rows);
# a bomb, 1,000 times. Below the floor any ratio passes: a small file with a bloated styles part.
MAX_UNPACK_RATIO = 100
UNPACK_FLOOR_BYTES = 64 << 20
# The most bytes one character can take in XML (`&#x10FFFF;`), so no cell within the character
# limit is refused, however it is written; the limit itself is checked with row and column later.
XML_BYTES_PER_CHAR = 10
_LT = 0x3C  # '<'
_NOT_A_TAG = np.array([0x21, 0x3F], np.uint8)  # '<!' (comment, CDATA) and '<?' open no element
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def member_chunks(archive: zipfile.ZipFile, path: str) -> Iterator[bytes]:
    """The unpacked bytes of one part, a megabyte at a time."""
    with archive.open(path) as member:
        while chunk := member.read(CHUNK_BYTES):
            yield chunk


def refuse_bombs(archive: zipfile.ZipFile, name: str, size: int, max_cell_chars: int) -> None:
    """Refuse an archive that unpacks past MAX_UNPACK_RATIO times its `size`, or any XML part
    holding a text longer than a cell may be: before openpyxl reads either into memory."""
    members = [info for info in archive.infolist() if not info.is_dir()]
    # Declared sizes bind: zipfile stops a part at its declared size (and fails its CRC).
    unpacked = sum(info.file_size for info in members)
    if unpacked > max(UNPACK_FLOOR_BYTES, MAX_UNPACK_RATIO * size):
        raise BatchFileError(
            f"{name} unpacks to {unpacked / 2**20:,.0f} MB from {size / 2**20:,.1f} MB, more than "
            f"{MAX_UNPACK_RATIO} times its size, which no spreadsheet program writes: it is not "
            "read; save it again from Excel or LibreOffice, or as CSV"
        )
    bound = max_cell_chars * XML_BYTES_PER_CHAR
    for info in members:
        try:
            longest = _longest_text(member_chunks(archive, info.filename), bound)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError) as exc:
            raise BatchFileError(f"{name} is a corrupt or unsupported workbook ({exc})") from None
        if longest > bound:
            raise BatchFileError(
                f"{name}: its part {info.filename} holds a text of more than {bound:,} bytes, "
                f"longer than any cell may be ({max_cell_chars:,} characters, "
                "PAYFLOW_MAX_CELL_CHARS): it is not read"
            )


def _longest_text(chunks: Iterator[bytes], bound: int) -> int:
    """Bytes in the longest stretch of an XML part between two element tags ('<' then neither
    '!' nor '?'), stopping once past `bound`; 0 for a part that is no XML (an image)."""
    longest, run, carry = 0, 0, b""
    for index, chunk in enumerate(chunks):
        if index == 0 and not _is_xml(chunk):
            return 0  # never parsed as XML; the ratio above bounds what it unpacks to
        text = np.frombuffer(carry + chunk, np.uint8)
        # A '<' ending the text waits for the next chunk, which says whether it opens a tag.
        carry = chunk[-1:] if chunk.endswith(b"<") else b""
        seen = len(text) - len(carry)
        opens = np.flatnonzero(text[:seen] == _LT)
        opens = opens[~np.isin(text[opens + 1], _NOT_A_TAG)]  # opens + 1 < len(text) here
        if len(opens) == 0:
            run += seen
        else:
            gaps = int(np.diff(opens).max(initial=0))
            longest = max(longest, run + int(opens[0]), gaps)
            run = seen - int(opens[-1])
        longest = max(longest, run)
        if longest > bound:
            break  # a bomb is refused without unpacking the rest
    return longest


def _is_xml(head: bytes) -> bool:
    for bom in _BOMS:
        head = head.removeprefix(bom)
    return head.lstrip(b" \t\r\n\x00").startswith(b"<")
