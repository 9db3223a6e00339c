"""Hostile batch files, generated on demand (no binaries are checked in): issue 7, item 6."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

from intake_files import HEADER, ROW, write_xlsx

CSV_HEADER = ",".join(HEADER)


def _rows(count: int, start: int = 1) -> list[str]:
    return [",".join([*ROW[:5], f"u-{n}", f"x-{n}"]) for n in range(start, start + count)]


def _csv(path: Path, lines: list[str]) -> Path:
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    return path


def nul_after_4kb(path: Path) -> Path:
    """A NUL byte in a cell well past the first 4 KB (which is all the binary sniff looks at)."""
    lines = [CSV_HEADER, *_rows(120)]
    assert len("\r\n".join(lines)) > 4096
    lines.append(",".join([*ROW[:4], "Nul\x00Name", "u-nul", "x-nul"]))
    return _csv(path, lines)


def vertical_tab_in_external_id(path: Path) -> Path:
    """`\\x0b` inside an externalId: a reject at validation, and the report is still written."""
    return _csv(path, [CSV_HEADER, *_rows(3), ",".join([*ROW[:6], "x\x0bvt"])])


def control_characters_in_every_column(path: Path) -> Path:
    """One row per column with a control character in that column."""
    lines = [CSV_HEADER]
    for index in range(len(HEADER)):
        cells = [*ROW[:5], f"u-{index}", f"x-{index}"]
        cells[index] = cells[index][:2] + "\x1b[31m" + cells[index][2:]
        lines.append(",".join(cells))
    return _csv(path, lines)


def unbalanced_quote(path: Path) -> Path:
    """10 data lines; row 3 opens a quote that a later quoted cell closes: 3 rows to pandas."""
    lines = [CSV_HEADER, *_rows(10)]
    lines[3] = ",".join([*ROW[:4], '"Kouadio Yao', "u-3", "x-3"])
    lines[9] = ",".join([*ROW[:4], 'Yao"', "u-9", "x-9"])
    return _csv(path, lines)


def unclosed_quote_to_the_end(path: Path) -> Path:
    """A quote opened on line 6 (data row 5) that nothing closes."""
    lines = [CSV_HEADER, *_rows(10)]
    lines[5] = ",".join([*ROW[:4], '"Kouadio Yao', "u-5", "x-5"])
    return _csv(path, lines)


def twenty_megabyte_name(path: Path) -> Path:
    """A 20 MB name: past any cell size a spreadsheet keeps."""
    return _csv(path, [CSV_HEADER, ",".join([*ROW[:4], "N" * 20_000_000, "u-1", "x-1"])])


def long_name(path: Path) -> Path:
    """A 1,000-character name: a cell, but not a name the API takes (a row reject)."""
    return _csv(path, [CSV_HEADER, *_rows(2), ",".join([*ROW[:4], "N" * 1000, "u-9", "x-9"])])


def million_columns(path: Path) -> Path:
    """A header of a million columns."""
    return _csv(path, [CSV_HEADER + ",x" * 1_000_000, *_rows(2)])


def duplicate_named_columns(path: Path) -> Path:
    """100,000 columns all named `amount` before the real header."""
    return _csv(path, ["amount," * 100_000 + CSV_HEADER, *_rows(2)])


def wide_data_row(path: Path) -> Path:
    """A good header, then one data line of a million cells."""
    return _csv(path, [CSV_HEADER, *_rows(2), ",".join(ROW) + ",y" * 1_000_000])


def binary_noise(path: Path) -> Path:
    """Bytes that are no text at all."""
    path.write_bytes(bytes(range(256)) * 64)
    return path


def _inline_row(number: int, values: list[str]) -> str:
    cells = "".join(_inline_cell(f"{chr(65 + i)}{number}", v) for i, v in enumerate(values))
    return f'<row r="{number}">{cells}</row>'


def million_empty_rows_xlsx(path: Path) -> Path:
    """An XLSX: a good header and row, then a million rows of empty strings."""
    write_xlsx(path, [HEADER, ROW])
    head = "<sheetData>" + _inline_row(1, HEADER) + _inline_row(2, ROW)
    with zipfile.ZipFile(path) as source:
        parts = {item: source.read(item) for item in source.namelist()}
    sheet = next(name for name in parts if name.startswith("xl/worksheets/sheet"))
    text = parts[sheet].decode("utf-8")
    before, after = text.split("<sheetData>")[0], text.split("</sheetData>")[1]
    # The sheet still states its size as A1:G2, as the small workbook had it: a reader that
    # trusted that would silently read two rows.
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            if name != sheet:
                target.writestr(name, data)
        with target.open(sheet, "w") as handle:
            handle.write((before + head).encode())
            empty = '<c r="A{0}" t="inlineStr"><is><t></t></is></c>'
            for start in range(3, 1_000_003, 10_000):
                chunk = "".join(
                    f'<row r="{n}">{empty.format(n)}</row>' for n in range(start, start + 10_000)
                )
                handle.write(chunk.encode())
            handle.write(("</sheetData>" + after).encode())
    return path


_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PACKAGE = "http://schemas.openxmlformats.org/package/2006"
_SHEET_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_RELS_TYPE = "application/vnd.openxmlformats-package.relationships+xml"
_BOMB_PARTS = {
    "[Content_Types].xml": f'<Types xmlns="{_PACKAGE}/content-types">'
    f'<Default Extension="rels" ContentType="{_RELS_TYPE}"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    f'<Override PartName="/xl/workbook.xml" ContentType="{_SHEET_TYPE}.sheet.main+xml"/>'
    f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{_SHEET_TYPE}.worksheet+xml"/>'
    f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_SHEET_TYPE}.sharedStrings+xml"/>'
    "</Types>",
    "_rels/.rels": f'<Relationships xmlns="{_PACKAGE}/relationships">'
    f'<Relationship Id="rId1" Type="{_OFFICE}/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>",
    "xl/workbook.xml": f'<workbook xmlns="{_MAIN}" xmlns:r="{_OFFICE}"><sheets>'
    '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
    "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{_PACKAGE}/relationships">'
    f'<Relationship Id="rId1" Type="{_OFFICE}/worksheet" Target="worksheets/sheet1.xml"/>'
    f'<Relationship Id="rId2" Type="{_OFFICE}/sharedStrings" Target="sharedStrings.xml"/>'
    "</Relationships>",
}


def xlsx_with_long_name(path: Path, size: int, *, shared: bool) -> Path:
    """An XLSX whose row 2 name holds `size` bytes of 'A', as a shared string or inline: a zip
    bomb (600 MB of it zips to 3 MB), streamed out a megabyte at a time."""
    if shared:
        return xlsx_with_repeated(path, "xl/sharedStrings.xml", "<si><t>{MANY}</t></si>", "A", size)
    return xlsx_with_repeated(path, "xl/worksheets/sheet1.xml", "<t>{MANY}</t>", "A", size)


# Where each part's repeated text goes: the name cell of row 2, a shared string, the styles.
_NAME_CELL = '<c r="E2" t="inlineStr"><is>{NAME}</is></c>'
_SHARED_NAME = '<c r="E2" t="s"><v>0</v></c>'


def xlsx_with_repeated(path: Path, part: str, shape: str, unit: str, size: int) -> Path:
    """A hand-written XLSX whose `part` holds `shape` with `{MANY}` replaced by `unit` repeated
    to `size` bytes: in the sheet, as the inside of row 2's name cell (`<is>`); in the shared
    strings, as the whole table (row 2's name is its first string); in the styles (otherwise
    absent), as the whole stylesheet. Streamed out a megabyte at a time."""
    shared = part == "xl/sharedStrings.xml"
    name = _SHARED_NAME if shared else _NAME_CELL.format(NAME="<t>Kouadio Yao</t>")
    if part == "xl/worksheets/sheet1.xml":
        name = _NAME_CELL.format(NAME=shape)
    row = "".join(
        name if column == "E" else _inline_cell(f"{column}2", value)
        for column, value in zip("ABCDEFG", ROW, strict=True)
    )
    sheet = f'<worksheet xmlns="{_MAIN}"><sheetData>{_inline_row(1, HEADER)}<row r="2">{row}</row>'
    parts = {
        **_BOMB_PARTS,
        "xl/worksheets/sheet1.xml": sheet + "</sheetData></worksheet>",
        "xl/sharedStrings.xml": f'<sst xmlns="{_MAIN}">'
        + (shape if shared else "<si><t>Kouadio Yao</t></si>")
        + "</sst>",
    }
    if part == "xl/styles.xml":  # without one, openpyxl applies its own default styles
        parts[part] = f'<styleSheet xmlns="{_MAIN}">{shape}</styleSheet>'
    block = unit.encode() * ((1 << 20) // max(1, len(unit)))
    # Level 1: fast to write (a second for 600 MB) and still over 200 times smaller.
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for item, text in parts.items():
            with archive.open(item, "w", force_zip64=True) as handle:
                before, many, after = text.partition("{MANY}")
                handle.write(before.encode())
                written = 0
                while many and written < size:
                    piece = block[: size - written]
                    handle.write(piece)
                    written += len(piece)
                handle.write(after.encode())
    return path


def _inline_cell(reference: str, value: str) -> str:
    return f'<c r="{reference}" t="inlineStr"><is><t>{value}</t></is></c>'


def dot_external_ids(path: Path) -> Path:
    """Rows whose externalId is `.` or `..` beside good rows (issue 36, item 3): rejected, and
    the rejected rows are never looked up at the service (it broke the batch after paying)."""
    return _csv(
        path, [CSV_HEADER, *_rows(2), ",".join([*ROW[:6], "."]), ",".join([*ROW[:6], ".."])]
    )


def escaped_control_character_xlsx(path: Path) -> Path:
    """A name cell `Kouadio_x000B_Yao`: OOXML's escape of a vertical tab, which Excel shows as
    one and openpyxl returned as the seven characters (issue 36, item 9): a reject."""
    rows: list[list[object]] = [
        list(HEADER),
        list(ROW),
        [*ROW[:4], "Kouadio_x000B_Yao", "u-2", "x-2"],
    ]
    return write_xlsx(path, rows)


def plus_in_requisites(path: Path) -> Path:
    """A wallet phone written `+2250700001234`: rejected, and the masked value shows the `+`
    that caused it (it read `*********1234`)."""
    return _csv(path, [CSV_HEADER, ",".join([*ROW[:3], "+2250700001234", *ROW[4:]])])


HOSTILE: dict[str, tuple[Callable[[Path], Path], int, str]] = {
    # case: (writer, expected exit code, words the one line or the report must hold)
    "nul_after_4kb.csv": (nul_after_4kb, 2, "NUL byte on line 122"),
    "vertical_tab.csv": (vertical_tab_in_external_id, 1, "no_control_characters"),
    "control_everywhere.csv": (control_characters_in_every_column, 1, "no_control_characters"),
    "unbalanced_quote.csv": (unbalanced_quote, 2, "row 4, column 'name' opens a quote"),
    "unclosed_quote.csv": (
        unclosed_quote_to_the_end,
        2,
        "a quote opened on line 6 is never closed",
    ),
    "name_20mb.csv": (twenty_megabyte_name, 2, "PAYFLOW_MAX_CELL_CHARS"),
    "name_1000.csv": (long_name, 1, "name_length"),
    "million_columns.csv": (million_columns, 2, "PAYFLOW_MAX_COLUMNS"),
    "duplicate_columns.csv": (duplicate_named_columns, 2, "PAYFLOW_MAX_COLUMNS"),
    "wide_data_row.csv": (wide_data_row, 2, "line 4 has 1000007 cells but the header has 7"),
    "binary_noise.csv": (binary_noise, 2, "neither CSV nor XLSX"),
    "million_empty_rows.xlsx": (million_empty_rows_xlsx, 2, "PAYFLOW_MAX_BLANK_ROWS"),
    "dot_external_ids.csv": (dot_external_ids, 1, "external_id_dot_segment"),
    "escaped_control_character.xlsx": (escaped_control_character_xlsx, 1, "no_control_characters"),
    "plus_in_requisites.csv": (plus_in_requisites, 1, "[+*********1234]"),
    # Found by hand: 1.35 GB of memory to refuse it, as openpyxl read the cell before our limit.
    "shared_string_bomb.xlsx": (
        lambda path: xlsx_with_long_name(path, 600 << 20, shared=True),
        2,
        "more than 100 times its size",
    ),
}
