"""Reading XLSX batches: numbers Excel stored, formulas, sheets, unreadable workbooks."""

from __future__ import annotations

import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from intake_files import HEADER, ROW, with_cached_formula_values, with_stored_number, write_xlsx
from openpyxl import Workbook

from payflow.intake import BatchFileError, batch_id_of, read_batch_file
from payflow.schemas.validation import validate_rows


def test_text_cells_read_as_they_are(tmp_path: Path) -> None:
    raw = read_batch_file(write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW]))
    assert raw.frame.loc[2].tolist() == ROW
    assert raw.read_problems == []


@pytest.mark.parametrize(
    ("stored", "text"),
    [
        ("2250700000000.0", "2250700000000"),
        ("7.9161234567E10", "79161234567"),
        ("254712345678", "254712345678"),
    ],
)
def test_phone_stored_as_a_number_gets_its_exact_digits_back(
    tmp_path: Path, stored: str, text: str
) -> None:
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW])
    raw = read_batch_file(with_stored_number(path, "D2", stored))
    assert raw.frame.at[2, "requisites"] == text


@pytest.mark.parametrize(
    ("stored", "text"),
    [
        ("1500.5", "1500.5"),
        ("0.30000000000000004", "0.30000000000000004"),
        ("100.0", "100"),
        ("1.5E3", "1500"),
        ("15000", "15000"),
    ],
)
def test_float_amount_becomes_its_shortest_round_trip_decimal(
    tmp_path: Path, stored: str, text: str
) -> None:
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW])
    raw = read_batch_file(with_stored_number(path, "A2", stored))
    assert raw.frame.at[2, "amount"] == text


def test_numbers_typed_into_cells_read_back(tmp_path: Path) -> None:
    row = [1500.5, *ROW[1:3], 2250700000000, *ROW[4:]]
    raw = read_batch_file(write_xlsx(tmp_path / "b.xlsx", [HEADER, row]))
    assert raw.frame.loc[2, ["amount", "requisites"]].tolist() == ["1500.5", "2250700000000"]


def test_a_twenty_digit_account_stored_as_a_number_is_a_reject(tmp_path: Path) -> None:
    row = [*ROW[:3], 40817810899910004312.0, *ROW[4:]]
    raw = read_batch_file(write_xlsx(tmp_path / "b.xlsx", [HEADER, row]))
    (problem,) = raw.read_problems
    assert (problem.row, problem.column, problem.rule) == (2, "requisites", "number_lost_digits")


def test_formula_cells_use_the_cached_value(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, ["=10000+5000", *ROW[1:]]])
    raw = read_batch_file(with_cached_formula_values(path, "15000"))
    assert raw.frame.at[2, "amount"] == "15000"
    assert raw.read_problems == []


def test_a_formula_no_program_computed_is_named_not_read_as_empty(tmp_path: Path) -> None:
    # openpyxl (a script's export) saves formulas without their results; Excel saves both.
    raw = read_batch_file(write_xlsx(tmp_path / "b.xlsx", [HEADER, ["=10000+5000", *ROW[1:]]]))
    (problem,) = raw.read_problems
    assert (problem.row, problem.column, problem.rule) == (2, "amount", "formula_without_value")
    assert "save it, or paste the values" in problem.message


def test_a_row_with_nothing_but_such_a_formula_is_kept_to_be_rejected(tmp_path: Path) -> None:
    # A script's totals row: read as blank it would vanish, and a real row of formulas with it.
    total = ["=SUM(A2:A2)"] + [None] * (len(HEADER) - 1)
    raw = read_batch_file(write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW, total]))
    assert raw.frame.index.tolist() == [2, 3]
    assert [(p.row, p.rule) for p in raw.read_problems] == [(3, "formula_without_value")]


def test_blank_trailing_rows_are_ignored(tmp_path: Path) -> None:
    rows: list[list[object]] = [HEADER, ROW, [None] * 7, ["", None, "", "", "", "", ""]]
    raw = read_batch_file(write_xlsx(tmp_path / "b.xlsx", rows))
    assert raw.frame.index.tolist() == [2]


def test_first_visible_sheet_by_default_and_sheet_by_name(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW], sheet="payouts", extra_sheet=True)
    with pytest.raises(BatchFileError, match="required column missing"):
        read_batch_file(path)
    assert read_batch_file(path, sheet="payouts").frame.loc[2].tolist() == ROW
    with pytest.raises(BatchFileError, match=r"no sheet named 'other' \(sheets: notes, payouts\)"):
        read_batch_file(path, sheet="other")


def _two_sheets(first: list[list[object]], second: list[list[object]]) -> Workbook:
    workbook = Workbook()
    old = workbook.active
    assert old is not None
    old.title = "old"
    for row in first:
        old.append(row)
    current = workbook.create_sheet("current")
    for row in second:
        current.append(row)
    return workbook


def test_a_hidden_sheet_is_never_read_unasked(tmp_path: Path) -> None:
    # Found by hand: the first sheet, hidden, held last month's row of 99999, and it was paid.
    hidden_row = ["99995", *ROW[1:-1], "hid-1"]
    workbook = _two_sheets([HEADER, hidden_row], [HEADER, ROW])
    workbook["old"].sheet_state = "hidden"
    workbook.active = 1
    workbook.save(tmp_path / "h.xlsx")
    raw = read_batch_file(tmp_path / "h.xlsx")
    assert raw.frame.loc[2].tolist() == ROW
    # Asked for by name it is read, as another batch than the file's first sheet.
    hidden = read_batch_file(tmp_path / "h.xlsx", sheet="old")
    assert hidden.frame.loc[2].tolist() == hidden_row
    assert len({raw.batch_id, hidden.batch_id}) == 2


def test_payout_rows_on_two_visible_sheets_are_refused_until_one_is_chosen(tmp_path: Path) -> None:
    workbook = _two_sheets([HEADER, ROW], [HEADER, ROW])
    workbook.save(tmp_path / "m.xlsx")
    data = (tmp_path / "m.xlsx").read_bytes()
    with pytest.raises(
        BatchFileError,
        match=r"m.xlsx has payout rows on 2 sheets \('old', 'current'\): choose one with --sheet",
    ):
        read_batch_file(tmp_path / "m.xlsx")
    first = read_batch_file(tmp_path / "m.xlsx", sheet="old")
    second = read_batch_file(tmp_path / "m.xlsx", sheet="current")
    # The first sheet keeps the id the file always had; another sheet is another batch.
    assert first.batch_id == batch_id_of(data) != second.batch_id


def test_same_cells_in_csv_and_xlsx_read_the_same(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[2] / "data"
    from_csv = read_batch_file(data / "batch_clean.csv").frame
    from_xlsx = read_batch_file(data / "batch_clean.xlsx").frame
    assert from_csv.equals(from_xlsx)


def test_a_zip_that_is_not_a_workbook(tmp_path: Path) -> None:
    path = tmp_path / "b.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a workbook")
    with pytest.raises(BatchFileError, match="corrupt or unsupported workbook"):
        read_batch_file(path)


def test_a_sheet_whose_xml_is_broken_is_one_line(tmp_path: Path) -> None:
    # Found by hand: "unexpected error (ParseError)", since openpyxl parses a sheet's XML only as
    # its rows are read, after the workbook opened without complaint.
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW, [*ROW[:6], "x-2"]])
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    sheet = "xl/worksheets/sheet1.xml"
    parts[sheet] = parts[sheet].replace(b'<row r="3"', b'<row r="3" <<', 1)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    with pytest.raises(BatchFileError, match=r"^b\.xlsx is a corrupt or unsupported workbook"):
        read_batch_file(path)


def test_a_hidden_row_is_rejected_not_paid(tmp_path: Path) -> None:
    # Found by hand: rows an operator had filtered out (hidden) were read and paid unseen.
    second = ["20000", *ROW[1:-2], "u-2", "x-2"]
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in (HEADER, ROW, second):
        sheet.append(row)
    sheet.row_dimensions[3].hidden = True
    workbook.save(tmp_path / "f.xlsx")
    report = validate_rows(
        read_batch_file(tmp_path / "f.xlsx"), services=None, banks_for_phones=None
    )
    assert [i.external_id for i in report.instructions] == ["x-1"]
    [problem] = report.rejects
    assert (problem.row, problem.rule, problem.external_id) == (3, "hidden_row", "x-2")
    assert problem.message.startswith("the row is hidden in the workbook (filtered out")


def test_a_value_in_a_hidden_payout_column_is_rejected_not_paid(tmp_path: Path) -> None:
    # Found by hand: the amount column hidden, and the amounts the operator read typed into a
    # new "Amount to pay" column beside it, which payflow does not send: each row was paid the
    # hidden amount (15,000 where 1,500 showed), with nothing but an unknown_column warning.
    header = [*HEADER, "Amount to pay", "note"]
    rows = [[*ROW, "1500", ""], ["", *ROW[1:-2], "u-2", "x-2", "", "hidden, but empty"]]
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in (header, *rows):
        sheet.append(row)
    sheet.column_dimensions["A"].hidden = True  # amount
    sheet.column_dimensions["H"].hidden = True  # a column payflow does not read
    workbook.save(tmp_path / "f.xlsx")
    report = validate_rows(
        read_batch_file(tmp_path / "f.xlsx"), services=None, banks_for_phones=None
    )
    assert report.instructions == []
    assert [(p.row, p.column, p.rule) for p in report.rejects] == [
        (2, "amount", "hidden_column"),
        (3, "amount", "amount_present"),  # nothing hidden in an empty cell: its own reason
    ]
    assert report.rejects[0].message.startswith("amount is in column A, hidden in the workbook")


def test_rows_under_a_merged_cell_are_rejected_not_paid_without_its_value(tmp_path: Path) -> None:
    # Found by hand: a serviceId merged over three rows showed on each of them, but only the
    # first held it, so the other two were paid through the merchant's default service.
    header = [*HEADER, "serviceId", "comment"]
    rows = [[*ROW[:-2], f"u-{n}", f"x-{n}", "201" if n == 1 else "", "batch A"] for n in (1, 2, 3)]
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in (header, *rows, ["", "", "", "", "", "", "", "", ""]):
        sheet.append(row)
    sheet.merge_cells("H2:H4")  # serviceId over rows 2-4
    sheet.merge_cells("I2:I5")  # a column payflow does not read: nothing hidden from it
    workbook.save(tmp_path / "m.xlsx")
    report = validate_rows(
        read_batch_file(tmp_path / "m.xlsx"), services=None, banks_for_phones=None
    )
    assert [(i.external_id, i.service_id) for i in report.instructions] == [("x-1", 201)]
    assert [(p.row, p.column, p.rule, p.external_id) for p in report.rejects] == [
        (3, "serviceId", "merged_cell", "x-2"),
        (4, "serviceId", "merged_cell", "x-3"),
    ]
    assert report.rejects[0].message.startswith("serviceId is part of the merged cells H2:H4")


def test_a_trailing_column_with_values_and_no_header_is_reported_as_in_csv(
    tmp_path: Path,
) -> None:
    # Issue 36 item 5: a forgotten serviceId header at the sheet's end was dropped with no
    # word ("3 rows, 3 valid"), while in the middle of the sheet, or in a CSV, it was named.
    rows = [HEADER, [*ROW, "201"], [*ROW[:6], "x-2"], [*ROW[:6], "x-3", None, "202"]]
    raw = read_batch_file(write_xlsx(tmp_path / "b.xlsx", rows))
    eighth, ninth = len(HEADER) + 1, len(HEADER) + 2
    assert raw.unknown_columns == (
        f"column {eighth} (no header, 1 value)",
        f"column {ninth} (no header, 1 value)",
    )
    position = len(HEADER) + 2
    two = read_batch_file(write_xlsx(tmp_path / "c.xlsx", [HEADER, *([[*ROW, "", 7]] * 2)]))
    assert two.unknown_columns == (f"column {position} (no header, 2 values)",)
    assert list(two.frame.columns) == HEADER


def _both_readers(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """What calamine's fast path and openpyxl's reader make of one workbook."""
    from payflow.intake import xlsx

    calls: list[bool] = []
    plain = xlsx._read_plain

    def recorded(*args: object, **kwargs: object) -> object:
        read = plain(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(read is not None)
        return read

    monkeypatch.setattr(xlsx, "_read_plain", recorded)
    fast = read_batch_file(path)
    assert calls == [True], "the fast path should have read this workbook"
    monkeypatch.setattr(xlsx, "_read_plain", lambda *args, **kwargs: None)
    slow = read_batch_file(path)
    return (fast.frame.to_dict(), fast.read_problems, fast.unknown_columns), (
        slow.frame.to_dict(),
        slow.read_problems,
        slow.unknown_columns,
    )


def test_the_fast_reader_reads_what_openpyxl_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 40: calamine reads the plain sheets; every value, number format, date, boolean,
    # long number and hidden or merged cell must read as openpyxl's reader read it.
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append([*HEADER, "note", "", "extra"])
    sheet.append([1500.5, *ROW[1:3], 2250700000000, *ROW[4:], "n", None, "kept"])
    sheet.append([15, *ROW[1:6], "x-2", datetime(2026, 1, 5), None, None])
    sheet.append([1500.456, *ROW[1:3], 12345678901234567890, *ROW[4:6], "x-3", True])
    sheet.append([300, *ROW[1:6], datetime(2026, 1, 5, 12, 30), "free text"])
    sheet.append([0.1 + 0.2, *ROW[1:6], "x-5", "=1+1"])
    sheet["A3"].number_format = "0%"  # shows 1500%: a reject
    sheet["A4"].number_format = "#,##0.00"  # shows 1,500.46: a reject
    sheet["A5"].number_format = "0.00"  # shows 300.00: the number it holds
    sheet.row_dimensions[6].hidden = True
    sheet.merge_cells("F4:F5")
    path = tmp_path / "mixed.xlsx"
    workbook.save(path)

    fast, slow = _both_readers(path, monkeypatch)

    assert fast == slow
    problems = {(p.row, p.rule) for p in fast[1]}  # type: ignore[index]
    assert {(3, "number_shown_otherwise"), (4, "number_shown_otherwise")} <= problems
    assert (5, "date_cell") in problems and (6, "hidden_row") in problems


@pytest.mark.parametrize(
    "far", ["XFD2", "A300000", "BM2"], ids=["last-column", "far-row", "past-64-columns"]
)
def test_a_cell_far_from_the_rest_is_read_by_openpyxl_not_as_one_huge_grid(
    tmp_path: Path, far: str
) -> None:
    # calamine holds a sheet as one grid up to its farthest cell: XFD200000 asked it for
    # 100 GB and aborted the process. Such a sheet is left to openpyxl's reader, a row at a time.
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(HEADER)
    sheet.append(ROW)
    sheet[far] = "far away"
    workbook.save(tmp_path / "far.xlsx")
    if far == "A300000":
        with pytest.raises(BatchFileError, match="PAYFLOW_MAX_BLANK_ROWS"):
            read_batch_file(tmp_path / "far.xlsx")
        return
    raw = read_batch_file(tmp_path / "far.xlsx")
    assert raw.frame.loc[2].tolist() == ROW
