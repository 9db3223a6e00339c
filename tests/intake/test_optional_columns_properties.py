"""Property: optional columns absent, empty in every row, full, or mixed never crash validation,
through CSV and XLSX alike, and valid rows stay valid (issue 7, item 5)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from intake_files import write_csv, write_xlsx

from payflow.intake import read_batch_file
from payflow.intake.columns import OPTIONAL_COLUMNS
from payflow.intake.lookups import ServiceInfo
from payflow.schemas.validation import validate_rows

REQUIRED = {
    "amount": "1500",
    "currency": "XOF",
    "paymentType": "SIM",
    "requisites": "2250700001234",
    "name": "Kouadio Yao",
    "userId": "u-1",
}
FILLED = {
    "serviceId": "201",
    "bankName": "any",
    "note": "for November",
    "userEmail": "who@example.com",
    "userPhone": "2250700001234",
    "userIp": "10.0.0.1",
    "callbackUrl": "https://example.com/cb",
    "bik": "044525225",
}
MODES = ("absent", "empty", "full", "mixed")
assert set(OPTIONAL_COLUMNS) == {*FILLED, "externalId"}

layouts = st.fixed_dictionaries({column: st.sampled_from(MODES) for column in OPTIONAL_COLUMNS})


def _as_cells(rows: list[list[str]]) -> list[list[object]]:
    return [list[object](row) for row in rows]


def _cell(column: str, mode: str, row: int) -> str:
    if mode == "empty" or (mode == "mixed" and row % 2):
        return ""
    return f"x-{row}" if column == "externalId" else FILLED[column]


def _rows(layout: dict[str, str], count: int) -> list[list[str]]:
    header = [*REQUIRED, *(c for c, mode in layout.items() if mode != "absent")]
    body = [
        [REQUIRED.get(column) or _cell(column, layout[column], n) for column in header]
        for n in range(count)
    ]
    return [header, *body]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts, count=st.integers(1, 4), xlsx=st.booleans())
def test_optional_columns_in_any_layout_never_crash(
    layout: dict[str, str], count: int, xlsx: bool
) -> None:
    rows = _rows(layout, count)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("b.xlsx" if xlsx else "b.csv")
        written = write_xlsx(path, _as_cells(rows)) if xlsx else write_csv(path, rows)
        raw = read_batch_file(written)
    report = validate_rows(raw, services=[ServiceInfo(201, "SIM", "XOF")], banks_for_phones=None)
    assert report.rejects == []
    assert report.valid == report.rows == count


def test_an_ip_column_empty_in_every_row_is_not_a_whole_column_failure(tmp_path: Path) -> None:
    # The case that crashed: pandera reported user_ip_format as failing "as a whole".
    layout = {column: "absent" for column in OPTIONAL_COLUMNS} | {"userIp": "empty"}
    for path in (tmp_path / "b.csv", tmp_path / "b.xlsx"):
        rows = _rows(layout, 3)
        written = (
            write_xlsx(path, _as_cells(rows)) if path.suffix == ".xlsx" else write_csv(path, rows)
        )
        report = validate_rows(read_batch_file(written), services=None, banks_for_phones=None)
        assert report.valid == 3
