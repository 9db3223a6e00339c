"""Writers of batch files in the forms operators send them, for the reading tests."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

from openpyxl import Workbook

HEADER = ["amount", "currency", "paymentType", "requisites", "name", "userId", "externalId"]
ROW = ["15000", "XOF", "SIM", "2250700001234", "Kouadio Yao", "u-1", "x-1"]


def write_csv(
    path: Path, rows: list[list[str]], *, sep: str = ",", encoding: str = "utf-8"
) -> Path:
    """A CSV as a spreadsheet program saves it (CRLF line ends, quoting where needed)."""
    lines = []
    for row in rows:
        cells = [f'"{c}"' if (sep in c or "\n" in c or '"' in c) else c for c in row]
        lines.append(sep.join(cells))
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    return path


def write_xlsx(
    path: Path, rows: list[list[object]], *, sheet: str = "Sheet1", extra_sheet: bool = False
) -> Path:
    """An XLSX whose cells hold the given Python values (numbers stay numbers)."""
    workbook = Workbook()
    worksheet = workbook.active
    assert worksheet is not None
    if extra_sheet:
        worksheet.title = "notes"
        worksheet.append(["nothing to pay here"])
        worksheet = workbook.create_sheet(sheet)
    else:
        worksheet.title = sheet
    for row in rows:
        worksheet.append(row)
    workbook.save(path)
    return path


def _rewrite_sheets(path: Path, rewrite: Callable[[str], str]) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(buffer, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet"):
                data = rewrite(data.decode("utf-8")).encode("utf-8")
            target.writestr(item, data)
    path.write_bytes(buffer.getvalue())
    return path


def with_cached_formula_values(path: Path, cached: str) -> Path:
    """Store `cached` as the value Excel computed for every formula (openpyxl writes none)."""
    pattern = r"(<f>[^<]*</f>)<v\s*/?>(</v>)?"
    return _rewrite_sheets(path, lambda text: re.sub(pattern, rf"\1<v>{cached}</v>", text))


def with_stored_number(path: Path, cell: str, stored: str) -> Path:
    """Put a number into `cell` exactly as Excel writes it in the XML (`7.9161234567E10`)."""
    pattern = rf'<c r="{cell}"[^>]*>.*?</c>'
    replacement = f'<c r="{cell}" t="n"><v>{stored}</v></c>'
    return _rewrite_sheets(path, lambda text: re.sub(pattern, replacement, text, count=1))


def with_cached_errors(path: Path, errors: dict[str, str]) -> Path:
    """Store each formula's error result (`=NA()`: `#N/A`) as a spreadsheet program saves it."""

    def cached(found: re.Match[str]) -> str:
        reference, formula = found.group(1), found.group(2)
        return f'<c r="{reference}" t="e"><f>{formula}</f><v>{errors["=" + formula]}</v></c>'

    pattern = r'<c r="([A-Z]+[0-9]+)"><f>([^<]*)</f><v\s*/?>(?:</v>)?</c>'
    return _rewrite_sheets(path, lambda text: re.sub(pattern, cached, text))
