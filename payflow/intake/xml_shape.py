"""What one XML part of a workbook would make openpyxl hold at once, measured a megabyte at a
time, whatever the XML's shape: its text and its elements, with comments, CDATA sections and
processing instructions read as the text they are, never as tags.

openpyxl streams a sheet a row at a time and the shared strings one `<si>` at a time; anything
else it holds whole. Its memory grows with a cell's text (a CDATA section's `<` is text, and a
shared string of a million rich-text runs is one string) and with the elements it holds (a row
of fifteen million `<c/>` took 4.9 GB, from a 300 KB file).

Text outside any cell (a part holding none, such as the workbook's defined names, or a sheet's
tail after its rows: conditional formats, links) is no one cell's text: each stretch of it is
bounded as any, and all of it by a larger bound. The elements of a sheet's tail are what
openpyxl keeps of it (a link per row is ordinary), bounded apart from a row's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

_LT, _GT, _SLASH = 0x3C, 0x3E, 0x2F  # '<', '>', '/'
# Bytes kept back from each chunk, so that a '<' near its end sees what follows it.
_LOOKAHEAD = 64
# Tags are scanned a piece at a time: a piece's arrays take a few bytes per byte of it.
_PIECE_BYTES = 1 << 18
# A cell, a shared string or a row: what openpyxl reads (and drops) one at a time. A row holds
# its cells, so only rows and shared strings end what is held; any of the three ends a text.
# The end of a sheet's rows ends both, and opens its tail.
_UNIT = re.compile(rb"<(/?)(?:[A-Za-z_][\w.-]*:)?(c|si|row|sheetData)(?=[\s/>])")
_TAIL = b"sheetData"
_PREFIXED = re.compile(rb"<[A-Za-z_][\w.-]*:")
_NAME_ENDS = np.zeros(256, bool)  # by byte: whether it ends a tag's name
_NAME_ENDS[np.frombuffer(b" \t\r\n/>", np.uint8)] = True
_SECTIONS = ((b"<!--", b"-->"), (b"<![CDATA[", b"]]>"), (b"<?", b"?>"))
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


@dataclass
class PartShape:
    """The most of an XML part held at once (bytes and element starts)."""

    longest_run: int = 0  # bytes between two tags (a long attribute, a comment, a text)
    most_text: int = 0  # text bytes of one cell, shared string or row
    most_held: int = 0  # element starts between two rows or shared strings (or in the part)
    elements: int = 0  # element starts in the part
    outside_text: int = 0  # text bytes before the first cell or row, or after a sheet's rows
    tail_held: int = 0  # element starts after a sheet's rows (links, formats, merged cells)
    declaration: bool = False  # a <!DOCTYPE> or <!ENTITY>: entities no spreadsheet declares


def part_shape(chunks: Iterator[bytes], *, stop_past: PartShape) -> PartShape | None:
    """The shape of one part given as chunks; None for a part that is no XML (an image). Stops
    reading once any figure passes the same figure of `stop_past` (a bomb is not unpacked)."""
    scan = PartScan(stop_past)
    for chunk in chunks:
        scan.feed(chunk)
        if scan.stopped:
            break
    scan.close()
    return scan.shape()


class PartScan:
    """`part_shape` a chunk at a time, for a reader of the part's bytes: each call gives back the
    bytes measured and found within `stop_past` so far, and nothing once past it."""

    def __init__(self, stop_past: PartShape) -> None:
        self.stop_past = stop_past
        self.stopped = False  # past a bound, or no XML: nothing more is measured or given
        self._scan: _Scan | None = None
        self._xml = True
        self._pending = b""  # kept back, so that a '<' near a chunk's end sees what follows it

    def feed(self, chunk: bytes) -> bytes:
        """Measure `chunk`; the bytes measured and within bounds (ending anywhere)."""
        if self.stopped:
            return b""
        if self._scan is None:
            if not _is_xml(chunk):
                self._xml, self.stopped = False, True
                return b""  # never parsed as XML; the unpacking ratio bounds it
            self._scan = _Scan()
        text = self._pending + chunk
        consumed = self._scan.feed(text, len(text) - _LOOKAHEAD)
        self._pending = text[consumed:]
        return self._within(text[:consumed])

    def close(self) -> bytes:
        """Measure what was kept back, at the part's end; the last bytes within bounds."""
        if self.stopped or self._scan is None:
            return b""
        rest, self._pending = self._pending, b""
        self._scan.feed(rest, len(rest))
        return self._within(rest)

    def _within(self, measured: bytes) -> bytes:
        assert self._scan is not None
        if self._scan.past(self.stop_past):
            self.stopped = True
            return b""
        return measured

    def shape(self) -> PartShape | None:
        """The part's shape (as far as it was read); None for a part that is no XML."""
        if not self._xml:
            return None
        return PartShape() if self._scan is None else self._scan.finish()


class _Scan:
    """Offsets are absolute (from the part's first byte); `base` is that of the text fed."""

    def __init__(self) -> None:
        self.shape = PartShape()
        self.base = 0
        self.last_cut = 0  # the last tag's '<'
        self.last_lt = -1  # the last '<' of a tag or section start
        self.closed_at = -1  # the '>' that closed it (-1: still open); text runs from there
        self.text = 0  # text bytes of the open cell, shared string or row
        self.held = 0  # element starts since the last row or shared string
        self.text_outside = True  # the open text is outside any cell (none yet, or the tail)
        self.held_tail = False  # the open elements are a sheet's tail
        self.ending: bytes | None = None  # the end awaited of the open comment, CDATA or PI

    def feed(self, text: bytes, limit: int) -> int:
        """Scan `text` up to `limit` (a section's end may run past it); return where it
        stopped, from which the next text is fed."""
        at = 0
        found = [-2, -2]  # the next `<!` and `<?` at or after `at` (-1: none; -2: not sought)
        while at < limit and not self.shape.declaration:
            if self.ending is not None:
                at = self._in_section(text, at, limit)
                continue
            # A section's opener may start on the last byte before `limit`. Each is sought
            # again only once `at` passed it: a megabyte with none is read once, not per piece.
            for index, mark in enumerate((b"<!", b"<?")):
                if -1 != found[index] < at:
                    found[index] = text.find(mark, at, limit + 1)
            opener = min((position for position in found if position >= 0), default=limit)
            stop = min(opener, limit, at + _PIECE_BYTES)
            self._plain(text, at, stop)
            at = stop if stop < opener or opener >= limit else self._open_section(text, opener)
        self.base += at
        return at

    def _open_section(self, text: bytes, at: int) -> int:
        for opening, ending in _SECTIONS:
            if text.startswith(opening, at):
                self.text += self._text_before(self.base + at)
                self.last_lt, self.closed_at = self.base + at, -1
                self.text += len(opening)  # a section is text to the parser: it holds its bytes
                self.ending = ending
                return at + len(opening)
        self.shape.declaration = True  # <!DOCTYPE, <!ENTITY: refused, never expanded
        return at

    def _in_section(self, text: bytes, at: int, limit: int) -> int:
        assert self.ending is not None
        found = text.find(self.ending, at)
        if found < 0 or found >= limit:
            self.text += limit - at
            return limit
        end = found + len(self.ending)
        self.text += end - at
        self.closed_at = self.base + end - 1
        self.ending = None
        return end

    def _text_before(self, lt: int) -> int:
        return lt - self.closed_at - 1 if self.closed_at >= 0 else 0

    def _plain(self, text: bytes, start: int, end: int) -> None:
        """Tags and text with no comment, CDATA or PI among them."""
        if end <= start:
            return
        window = np.frombuffer(text, np.uint8, end - start, start)
        lts = np.flatnonzero(window == _LT)
        gts = np.flatnonzero(window == _GT) + (self.base + start)
        if len(lts) == 0:
            if self.closed_at < 0 and len(gts):
                self.closed_at = int(gts[0])
            return
        starts = window[np.minimum(lts + 1, len(window) - 1)] != _SLASH
        if lts[-1] == len(window) - 1:  # its next byte is past `end`: in the text, kept back
            starts[-1] = text[end : end + 1] != b"/"
        lts += self.base + start
        self._cuts(lts)
        # Text before each '<' runs from the first '>' after the '<' before it (the end of that
        # tag; a '>' in the text is text), when that '>' comes first.
        previous_lt = np.concatenate(([self.last_lt], lts[:-1]))
        after = np.concatenate((gts, [np.iinfo(np.int64).max]))
        closes = after[np.searchsorted(gts, previous_lt, side="right")]
        if self.closed_at >= 0:
            closes[0] = self.closed_at
        texts = np.where(closes < lts, lts - closes - 1, 0)
        positions, holders, tails = _units(text, start, end, lts - self.base)
        self._texts(texts, positions, tails)
        self._held(starts, positions[holders], tails[holders])
        self.last_lt = int(lts[-1])
        closing = np.searchsorted(gts, self.last_lt, side="right")
        self.closed_at = int(gts[closing]) if closing < len(gts) else -1

    def _cuts(self, lts: np.ndarray) -> None:
        gaps = int(np.diff(lts).max(initial=0))
        run = max(int(lts[0]) - self.last_cut, gaps)
        self.shape.longest_run = max(self.shape.longest_run, run)
        self.last_cut = int(lts[-1])

    def _texts(self, texts: np.ndarray, units: np.ndarray, tails: np.ndarray) -> None:
        """Text before a unit's '<' is the previous unit's; a unit opens a new count, outside
        any cell when it is a sheet's tail."""
        totals = np.cumsum(texts)
        closed, self.text = _windows(self.text, totals[units], int(totals[-1]))
        inside, outside = _split(closed, _opened_by(self.text_outside, tails))
        self.shape.most_text = max(self.shape.most_text, inside)
        self.shape.outside_text = max(self.shape.outside_text, outside)
        self.text_outside = bool(tails[-1]) if len(tails) else self.text_outside

    def _held(self, starts: np.ndarray, holders: np.ndarray, tails: np.ndarray) -> None:
        """Element starts between rows or shared strings; a holder's own start is its own."""
        before = np.concatenate(([0], np.cumsum(starts)))  # starts before each '<'
        self.shape.elements += int(before[-1])
        closed, self.held = _windows(self.held, before[holders], int(before[-1]))
        held, tail = _split(closed, _opened_by(self.held_tail, tails))
        self.shape.most_held = max(self.shape.most_held, held)
        self.shape.tail_held = max(self.shape.tail_held, tail)
        self.held_tail = bool(tails[-1]) if len(tails) else self.held_tail

    def open_shape(self) -> PartShape:
        """The shape with the open text, elements and run counted as if the part ended here."""
        shape = self.shape
        text = self.text + self._text_before(self.base)
        return PartShape(
            longest_run=max(shape.longest_run, self.base - self.last_cut),
            most_text=max(shape.most_text, 0 if self.text_outside else text),
            most_held=max(shape.most_held, 0 if self.held_tail else self.held),
            elements=shape.elements,
            outside_text=max(shape.outside_text, text if self.text_outside else 0),
            tail_held=max(shape.tail_held, self.held if self.held_tail else 0),
            declaration=shape.declaration,
        )

    def past(self, bound: PartShape) -> bool:
        """Whether the part is already past any figure of `bound`."""
        shape = self.open_shape()
        return (
            shape.declaration
            or shape.longest_run > bound.longest_run
            or shape.most_text > bound.most_text
            or shape.most_held > bound.most_held
            or shape.elements > bound.elements
            or shape.outside_text > bound.outside_text
            or shape.tail_held > bound.tail_held
        )

    def finish(self) -> PartShape:
        """The part's shape once all of it was fed."""
        self.shape = self.open_shape()
        return self.shape


def _windows(carried: int, at_bounds: np.ndarray, total: int) -> tuple[np.ndarray, int]:
    """The counts closed at each bound (the open count `carried` first, then between bounds),
    and the count left open after the last: from the running totals at the bounds."""
    if len(at_bounds) == 0:
        return np.zeros(0, np.int64), carried + total
    closed = np.diff(at_bounds, prepend=0)
    closed[0] += carried
    return closed, total - int(at_bounds[-1])


def _opened_by(carried: bool, tails: np.ndarray) -> np.ndarray:
    """Of the counts `_windows` closed, which were a sheet's tail (or outside any cell): the
    first as the count carried in, each other as the bound that opened it."""
    return np.concatenate(([carried], tails[:-1])).astype(bool) if len(tails) else tails


def _split(closed: np.ndarray, marked: np.ndarray) -> tuple[int, int]:
    """The largest of the `closed` counts not marked, and of those marked."""
    return int(closed[~marked].max(initial=0)), int(closed[marked].max(initial=0))


def _units(
    text: bytes, start: int, end: int, lts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which of the '<' at `lts` (in `text`, between `start` and `end`) open a cell, a shared
    string or a row, or end a sheet's rows (indexes into `lts`); which of those hold elements
    (not a cell); and which end the rows, opening the sheet's tail."""
    stop = min(end + _LOOKAHEAD, len(text))  # a name starting before `end` may end past it
    if _PREFIXED.search(text, start, stop) is not None:  # `<x:row>`: rare, matched one by one
        found = [
            (match.start(), match.group(2))
            for match in _UNIT.finditer(text, start, stop)
            if match.start() < end and (match.group(1) == b"/") == (match.group(2) == _TAIL)
        ]
        at = np.array([position for position, _ in found], np.int64)
        names = [name for _, name in found]
        holds = np.array([name != b"c" for name in names], bool)
        return np.searchsorted(lts, at), holds, np.array([name == _TAIL for name in names], bool)
    # The names after each '<', a byte at a time (the text runs _LOOKAHEAD past `end`).
    data = np.frombuffer(text, np.uint8)
    after = [data[np.minimum(lts + k, len(text) - 1)] for k in (1, 2, 3, 4)]
    ends = [_NAME_ENDS[byte] for byte in after]
    cell = (after[0] == ord("c")) & ends[1]
    shared = (after[0] == ord("s")) & (after[1] == ord("i")) & ends[2]
    row = (after[0] == ord("r")) & (after[1] == ord("o")) & (after[2] == ord("w")) & ends[3]
    tail = (after[0] == _SLASH) & (after[1] == ord("s")) & (after[2] == ord("h"))
    for index in np.flatnonzero(tail):  # `</sh...`: once a sheet, so looked at one by one
        name_end = int(lts[index]) + 2 + len(_TAIL)
        tail[index] = text.startswith(_TAIL, int(lts[index]) + 2) and (
            text[name_end : name_end + 1] in (b" ", b"\t", b"\r", b"\n", b"/", b">")
        )
    positions = np.flatnonzero(cell | shared | row | tail)
    return positions, ~cell[positions], tail[positions]


def _is_xml(head: bytes) -> bool:
    for bom in _BOMS:
        head = head.removeprefix(bom)
    return head.lstrip(b" \t\r\n\x00").startswith(b"<")
