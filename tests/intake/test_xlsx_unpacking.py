"""An XLSX is refused before openpyxl unpacks more than a cell may hold: a zip bomb costs
megabytes, not gigabytes, and no cell a spreadsheet program can save is refused."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hostile_files import xlsx_with_long_name, xlsx_with_repeated
from intake_files import HEADER, ROW, write_xlsx
from openpyxl import Workbook
from openpyxl.workbook.defined_name import DefinedName

from payflow.intake import BatchFileError, read_batch_file
from payflow.intake.limits import ReadLimits
from payflow.intake.unpacking import UNPACK_FLOOR_BYTES, refuse_bombs

LIMITS = ReadLimits(max_rows=100, max_columns=200, max_cell_chars=32_767, max_blank_rows=10)


def _refusal_and_peak(path: Path) -> tuple[str, int]:
    """The one line that refuses `path`, and the most memory Python held while reading it."""
    tracemalloc.start()
    try:
        with pytest.raises(BatchFileError) as refused:
            read_batch_file(path, limits=LIMITS)
        return str(refused.value), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("shared", [True, False], ids=["shared_string", "inline_string"])
def test_a_cell_of_sixty_megabytes_is_refused_unread(tmp_path: Path, shared: bool) -> None:
    # Under the unpacking floor, so the text scan alone must catch it: openpyxl held the whole
    # cell (60 MB) before the cell limit saw it.
    size = UNPACK_FLOOR_BYTES - (4 << 20)
    path = xlsx_with_long_name(tmp_path / "b.xlsx", size, shared=shared)
    message, peak = _refusal_and_peak(path)
    part = "xl/sharedStrings.xml" if shared else "xl/worksheets/sheet1.xml"
    assert message == (
        f"b.xlsx: its part {part} holds a text of more than 327,670 bytes, longer than any cell "
        "may be (32,767 characters, PAYFLOW_MAX_CELL_CHARS): it is not read"
    )
    assert peak < 8 << 20


def test_a_workbook_unpacking_to_a_hundred_times_its_size_is_refused(tmp_path: Path) -> None:
    path = xlsx_with_long_name(tmp_path / "b.xlsx", UNPACK_FLOOR_BYTES + (8 << 20), shared=True)
    message, peak = _refusal_and_peak(path)
    assert message.startswith("b.xlsx unpacks to 72 MB from 0.3 MB, more than 100 times its size")
    assert peak < 1 << 20


SHEET, STRINGS, STYLES = "xl/worksheets/sheet1.xml", "xl/sharedStrings.xml", "xl/styles.xml"
TOO_LONG = "holds a text of more than 327,670 bytes, longer than any cell may be"
RUN = "<r><t>" + "A" * 60 + "</t></r>"  # a rich-text run: a cell's text in many pieces
TOO_MANY = "holds more than 262,144 XML elements in one row or shared string"
AFTER = "holds more than 524,288 XML elements after its rows"
OUTSIDE = "holds more than 16,777,216 bytes of text outside its cells"
AFTER_ROWS, ROWS_AGAIN = "</is></c></row></sheetData>", "<sheetData><row><c><is>"
# Found by hand, each under the unpacking floor, where the text scan alone must catch it (peak
# memory of `payflow validate` before): a '<' in a CDATA section or a comment is text, not a
# tag, and cut the text short (228 MB; a 60 MB comment took 423 MB and seven minutes); rich-text
# runs are one cell (630 MB); openpyxl holds an element per tag: a row of `<c/>` (4.9 GB), the
# styles of `<xf/>` (past 6.8 GB), a table of empty shared strings (1.3 GB).
SHAPES = {
    "cdata": (SHEET, "<t><![CDATA[{MANY}]]></t>", "A" * 60 + "<a ", 40 << 20, TOO_LONG),
    "comment": (SHEET, "<t>Yao</t><!--{MANY}-->", "A" * 60 + "<a ", 4 << 20, TOO_LONG),
    "instruction": (SHEET, "<t>Yao</t><?pi {MANY}?>", "A" * 60 + "<a ", 4 << 20, TOO_LONG),
    "rich_text_runs": (STRINGS, "<si>{MANY}</si>", RUN, 40 << 20, TOO_LONG),
    "inline_runs": (SHEET, "{MANY}", RUN, 40 << 20, TOO_LONG),
    "cells_in_one_row": (SHEET, "<t>Yao</t></is></c>{MANY}<c><is>", "<c/>", 2 << 20, TOO_MANY),
    "styles": (STYLES, "<cellXfs>{MANY}</cellXfs>", "<xf/>", 2 << 20, TOO_MANY),
    "nested": (SHEET, "<t>Yao</t>{MANY}", "<x>", 2 << 20, TOO_MANY),
    "empty_strings": (STRINGS, "<si><t>Yao</t></si>{MANY}", "<si/>", 12 << 20, "XML elements from"),
    "entities": (SHEET, "<t>Yao</t>{MANY}", '<!DOCTYPE x [<!ENTITY a "b">]>', 64, "<!DOCTYPE"),
    # Past the larger bounds of what lies outside any cell: a sheet's tail, a part of no cells.
    "tail_elements": (SHEET, f"<t>Yao</t>{AFTER_ROWS}{{MANY}}{ROWS_AGAIN}", "<x/>", 4 << 20, AFTER),
    "outside_text": (STYLES, "{MANY}", "<x>" + "A" * 2000 + "</x>", 20 << 20, OUTSIDE),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_bomb_of_any_xml_shape_is_refused_unread(tmp_path: Path, shape: str) -> None:
    part, xml, unit, size, words = SHAPES[shape]
    path = xlsx_with_repeated(tmp_path / "b.xlsx", part, xml, unit, size)
    message, peak = _refusal_and_peak(path)
    assert message.startswith("b.xlsx") and words in message
    assert "\n" not in message
    assert peak < 8 << 20


def test_comments_and_cdata_of_an_ordinary_size_are_read(tmp_path: Path) -> None:
    # Sections are text to the parser, not something to refuse: a program may write them.
    xml = "<t><![CDATA[Kouadio <Yao>]]></t><!-- written by hand --><?pi here?>"
    path = xlsx_with_repeated(tmp_path / "b.xlsx", SHEET, xml, "", 0)
    assert read_batch_file(path, limits=LIMITS).frame.loc[2, "name"] == "Kouadio <Yao>"


def test_the_longest_cells_a_spreadsheet_saves_are_read_whole(tmp_path: Path) -> None:
    # Excel's limit written at its longest: every '&' is 5 bytes of XML, an emoji 4.
    ampersands, emoji = "&" * 32_767, "\U0001f600" * 32_767
    row = [*ROW[:4], ampersands, emoji, ROW[6]]
    frame = read_batch_file(write_xlsx(tmp_path / "b.xlsx", [HEADER, row]), limits=LIMITS).frame
    assert frame.loc[2, "name"] == ampersands and frame.loc[2, "userId"] == emoji


def test_a_part_whose_zipped_bytes_are_damaged_is_one_line(tmp_path: Path) -> None:
    # Found by hand: zlib's error escaped as "unexpected error (error)", with a traceback logged.
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW])
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("xl/worksheets/sheet1.xml")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 8
    data[start : start + 32] = bytes(b ^ 0x5A for b in data[start : start + 32])
    path.write_bytes(data)
    with pytest.raises(BatchFileError, match=r"^b\.xlsx is a corrupt or unsupported workbook"):
        read_batch_file(path, limits=LIMITS)


def test_defined_names_links_and_formats_of_a_real_workbook_are_read(tmp_path: Path) -> None:
    # Refused as "a text longer than any cell" (30,000 defined names: 330 KB of their text,
    # counted as one cell's) and "more than 262,144 elements in one row" (a link on each of
    # 300,000 rows after the sheet's last row, counted in it), though spreadsheets write both.
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in (HEADER, ROW):
        sheet.append(row)
    for n in range(30_000):
        book.defined_names[f"rate_{n}"] = DefinedName(f"rate_{n}", attr_text="Sheet1!$B$2")
    path = tmp_path / "names.xlsx"
    book.save(path)
    assert read_batch_file(path, limits=LIMITS).frame.loc[2, "name"] == ROW[4]
    links = "".join(f'<hyperlink ref="H{n}" location="Sheet1!A{n}"/>' for n in range(300_000))
    formats = "".join(
        f'<conditionalFormatting sqref="B{n}"><cfRule type="cellIs" dxfId="0" priority="{n}" '
        f'operator="greaterThan"><formula>{n}</formula></cfRule></conditionalFormatting>'
        for n in range(20_000)
    )
    tail = f"</sheetData>{formats}<hyperlinks>{links}</hyperlinks>"
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    parts[SHEET] = parts[SHEET].replace(b"</sheetData>", tail.encode())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for part, data in parts.items():
            archive.writestr(part, data)
    # The bounds alone: openpyxl then reads it (5 s and 340 MB, by hand), too slow for a test.
    with zipfile.ZipFile(path) as archive:
        refuse_bombs(archive, "links.xlsx", path.stat().st_size, LIMITS.max_cell_chars)


def test_a_part_where_the_sheets_lie_is_checked_before_openpyxl_reads_it(tmp_path: Path) -> None:
    # A sheet's part is checked as it is read, in one pass with what reads it; a workbook
    # that puts its main part where the sheets lie (the manifest says where) must not have
    # it parsed unchecked: openpyxl holds all of its text (here 20 MB).
    path = xlsx_with_repeated(tmp_path / "b.xlsx", SHEET, "<t>Yao</t>", "", 0)
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    book = parts.pop("xl/workbook.xml").replace(
        b"</workbook>", b"<x>" + b"A" * (20 << 20) + b"</x></workbook>"
    )
    parts["xl/worksheets/book.xml"] = book
    rels = parts.pop("xl/_rels/workbook.xml.rels")
    parts["xl/worksheets/_rels/book.xml.rels"] = rels.replace(
        b"worksheets/sheet1.xml", b"sheet1.xml"
    ).replace(b'"sharedStrings.xml"', b'"../sharedStrings.xml"')
    manifest = parts.pop("[Content_Types].xml")
    parts["[Content_Types].xml"] = manifest.replace(b"/xl/workbook.xml", b"/xl/worksheets/book.xml")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for part, data in parts.items():
            archive.writestr(part, data)
    message, peak = _refusal_and_peak(path)
    assert message.startswith("b.xlsx: its part xl/worksheets/book.xml") and TOO_LONG in message
    assert peak < 8 << 20
