"""Reading XLSX batches: numbers Excel stored, formulas, sheets, unreadable workbooks."""

from __future__ import annotations

from pathlib import Path

import pytest
from intake_files import HEADER, ROW, with_cached_formula_values, with_stored_number, write_xlsx

from payflow.intake import BatchFileError, read_batch_file


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


def test_first_sheet_by_default_and_sheet_by_name(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "b.xlsx", [HEADER, ROW], sheet="payouts", extra_sheet=True)
    with pytest.raises(BatchFileError, match="required column missing"):
        read_batch_file(path)
    assert read_batch_file(path, sheet="payouts").frame.loc[2].tolist() == ROW
    with pytest.raises(BatchFileError, match=r"no sheet named 'other' \(sheets: notes, payouts\)"):
        read_batch_file(path, sheet="other")


def test_same_cells_in_csv_and_xlsx_read_the_same(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[2] / "data"
    from_csv = read_batch_file(data / "batch_clean.csv").frame
    from_xlsx = read_batch_file(data / "batch_clean.xlsx").frame
    assert from_csv.equals(from_xlsx)


def test_a_zip_that_is_not_a_workbook(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "b.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a workbook")
    with pytest.raises(BatchFileError, match="corrupt or unsupported workbook"):
        read_batch_file(path)
