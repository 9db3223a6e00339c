"""Refund, links and corrections files are read from XLSX as from CSV: the XLSX reader once
checked every file's header against the payout columns, so none of them could be an XLSX. Its
checks of hidden and merged cells, dates and formula errors cover each file's own columns."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from intake_files import with_cached_errors, write_xlsx
from openpyxl import Workbook, load_workbook

from payflow.intake import Problem, read_batch_file
from payflow.links.rows import read_link_rows
from payflow.refunds.intake import read_refund_file
from payflow.rerun import RerunRefused, read_corrections

ORDER = "6f1c1c2e-8f5e-4a55-9a43-1d1f2c3b4a5e"
OTHER = "6f1c1c2e-8f5e-4a55-9a43-1d1f2c3b4a5f"


def _xlsx(path: Path, *rows: list[object]) -> Path:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def test_a_refund_file_in_xlsx_is_read(tmp_path):
    path = _xlsx(tmp_path / "refunds.xlsx", ["orderId", "externalId", "amount"], [ORDER, "r-1", 25])
    file = read_refund_file(path)
    assert file.frame[["orderId", "externalId", "amount"]].values.tolist() == [[ORDER, "r-1", "25"]]


def _rules(problems: list[Problem]) -> list[tuple[int, str, str]]:
    return [(p.row, p.column, p.rule) for p in problems]


def test_a_hidden_order_id_column_is_rejected_not_refunded(tmp_path):
    # Found by hand: orderId hidden, the operator reading a visible "Order to refund" column
    # beside it, and payflow refund refunded the hidden order with no word of the hidden column.
    path = tmp_path / "refunds.xlsx"
    write_xlsx(path, [["orderId", "Order to refund", "reason"], [ORDER, OTHER, "decoy"]])
    book = load_workbook(path)
    book.active.column_dimensions["A"].hidden = True
    book.save(path)
    file = read_refund_file(path)
    assert _rules(file.read_problems) == [(2, "orderId", "hidden_column")]
    assert file.read_problems[0].message.startswith("orderId is in column A, hidden in the")


def test_a_date_or_error_in_an_order_id_is_named_and_ignored_columns_are_not_checked(tmp_path):
    # Found by hand: a date and a #N/A in orderId were called "orderId must be a UUID", while a
    # hidden 'name', a date in 'userId' and a merged cell over a note, columns refunds never
    # read, rejected their rows as hidden_column, date_cell and merged_cell.
    header = ["Order ID", "externalId", "reason", "batch note", "name", "userId"]
    rows = [
        [dt.datetime(2026, 1, 5), "r-1", dt.date(2026, 1, 1), "sweep", "Ivan", dt.date(2026, 1, 2)],
        ["=NA()", "", "", "", "", ""],  # nothing but the error: kept, to be rejected
        [ORDER, "r-3", "recall", "", "Olga", "=NA()"],
    ]
    path = write_xlsx(tmp_path / "refunds.xlsx", [header, *rows])
    book = load_workbook(path)
    book.active.merge_cells("D2:D4")
    book.active.column_dimensions["E"].hidden = True
    book.save(path)
    with_cached_errors(path, {"=NA()": "#N/A"})
    file = read_refund_file(path)
    assert _rules(file.read_problems) == [
        (2, "orderId", "date_cell"),
        (3, "orderId", "formula_error"),
    ]
    assert file.read_problems[1].message.startswith("Order ID shows the error #N/A")
    assert file.frame.index.tolist() == [2, 3, 4]
    assert file.frame.at[2, "reason"] == "2026-01-01T00:00:00"  # free text may hold a date


def test_a_links_file_in_xlsx_is_read(tmp_path):
    path = _xlsx(tmp_path / "links.xlsx", ["externalId", "userId", "amount"], ["l-1", "u-1", 300])
    report = read_link_rows(path)
    assert (report.rows, report.rejected) == (1, 0)
    assert [row.external_id for row in report.valid] == ["l-1"]


def test_a_links_file_gets_the_xlsx_checks_over_its_own_columns_only(tmp_path):
    # Found by hand: a hidden note, a date in a name and a merged comment, columns links never
    # read, rejected their rows; a userId read as nothing was also "userId is required"; and a
    # row holding only an #N/A amount was not counted (rows 2, rejected 3).
    header = ["externalId", "userId", "amount", "note", "name", "comment"]
    rows = [
        ["l-1", "u-1", "=NA()", "n", "Ivan", "batch A"],
        ["", "", "=NA()", "", "", ""],
        ["l-3", dt.date(2026, 1, 2), "300", "n", "Olga", ""],
        ["l-4", "u-4", "300", "n", dt.date(2026, 1, 1), ""],
    ]
    path = write_xlsx(tmp_path / "links.xlsx", [header, *rows])
    book = load_workbook(path)
    book.active.column_dimensions["D"].hidden = True
    book.active.merge_cells("F2:F5")
    book.save(path)
    with_cached_errors(path, {"=NA()": "#N/A"})
    report = read_link_rows(path)
    assert (report.rows, report.rejected) == (4, 3)
    assert _rules(report.problems) == [
        (2, "amount", "formula_error"),
        (3, "amount", "formula_error"),
        (4, "userId", "date_cell"),
        (3, "externalId", "externalId_required"),
        (3, "userId", "userId_required"),
    ]
    assert [row.external_id for row in report.valid] == ["l-4"]


def test_a_corrections_file_in_xlsx_is_read(tmp_path):
    path = _xlsx(
        tmp_path / "fix.xlsx", ["externalId", "requisites"], ["jun-003", "40817810299910000042"]
    )
    [correction] = read_corrections(path).values()
    assert correction.changes == {"requisites": "40817810299910000042"}


def test_a_corrections_file_with_a_hidden_row_or_an_na_cell_is_refused(tmp_path):
    # The corrections reader ignored read problems: a hidden row's correction was applied and an
    # #N/A name dropped, so a rerun went to requisites the operator never saw.
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["externalId", "requisites"])
    sheet.append(["jun-003", "40817810299910000042"])
    sheet.append(["jun-004", "40817810299910000059"])
    sheet.row_dimensions[3].hidden = True
    book.save(tmp_path / "hidden.xlsx")
    with pytest.raises(
        RerunRefused,
        match=r"hidden.xlsx: row 3: the row is hidden.*\(hidden_row\).*nothing was rerun",
    ):
        read_corrections(tmp_path / "hidden.xlsx")
    na = _xlsx(tmp_path / "na.xlsx", ["externalId", "name"], ["jun-003", "=NA()"])
    with pytest.raises(RerunRefused, match=r"row 2, name: .*nothing was rerun"):
        read_corrections(na)


def _payout_problems(path: Path) -> list[Problem]:
    return read_batch_file(path).read_problems


def _refund_problems(path: Path) -> list[Problem]:
    return read_refund_file(path).read_problems


def _link_problems(path: Path) -> list[Problem]:
    return read_link_rows(path).problems


READERS = {
    # kind: header, a row, another row whose last column read is a formula saved without result
    "payouts": (
        ["amount", "currency", "paymentType", "requisites", "name", "userId"],
        ["1500", "XOF", "SIM", "2250700001234", "Kouadio Yao", "u-1"],
        ["1500", "XOF", "SIM", "2250700005678", "Aya Kone", "=2*100"],
        _payout_problems,
    ),
    "refunds": (
        ["orderId", "externalId", "amount"],
        [ORDER, "r-1", "25"],
        [OTHER, "r-2", "=2*100"],
        _refund_problems,
    ),
    "links": (
        ["externalId", "userId", "amount"],
        ["l-1", "u-1", "300"],
        ["l-2", "u-2", "=2*100"],
        _link_problems,
    ),
}


@pytest.mark.parametrize("kind", list(READERS))
def test_numbers_and_formulas_in_columns_a_file_never_reads_are_not_judged(tmp_path, kind):
    # Found by hand: a 'fee' shown as a percentage, a 20-digit 'ref' stored as a number and a
    # 'total' formula saved without its result, in columns no reader reads, rejected the row
    # (number_shown_otherwise, number_lost_digits, formula_without_value) in all three files.
    header, row, formula_row, problems_of = READERS[kind]
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append([*header, "fee", "ref", "total"])
    sheet.append([*row, 0.15, 1e20, "=1+1"])
    sheet.append([*formula_row, 0.15, 1e20, "=1+1"])
    sheet.cell(2, len(header) + 1).number_format = "0%"
    sheet.cell(3, len(header) + 1).number_format = "0%"
    path = tmp_path / f"{kind}.xlsx"
    book.save(path)
    last = header[-1]
    assert _rules(problems_of(path)) == [(3, last, "formula_without_value")]


HIDDEN_WORDING = {
    # kind: what becomes of a hidden row (and of a row with a value in a hidden column)
    "payouts": ("it is not paid; unhide it to pay it", "the row is not paid"),
    "refunds": ("it is not refunded; unhide it to refund it", "the row is not refunded"),
    "links": ("it gets no payout link; unhide it to issue it one", "the row gets no payout link"),
}


@pytest.mark.parametrize("kind", list(HIDDEN_WORDING))
def test_a_hidden_row_or_column_is_worded_for_the_kind_of_file(tmp_path, kind):
    # Found by review: a refund file's hidden row said it "is not paid"; a refund is no payout.
    header, row, other, problems_of = READERS[kind]
    path = write_xlsx(tmp_path / f"{kind}.xlsx", [header, row, other])
    book = load_workbook(path)
    book.active.row_dimensions[3].hidden = True
    book.active.column_dimensions["A"].hidden = True
    book.save(path)
    hidden_row, hidden_column = HIDDEN_WORDING[kind]
    messages = {(p.row, p.rule): p.message for p in problems_of(path)}
    assert hidden_row in messages[(3, "hidden_row")]
    assert hidden_column in messages[(2, "hidden_column")]
    assert ("paid" in messages[(3, "hidden_row")]) == (kind == "payouts")


def test_a_hidden_row_of_a_corrections_file_is_not_applied(tmp_path):
    path = write_xlsx(tmp_path / "fix.xlsx", [["externalId", "requisites"], ["a", "1"], ["b", "2"]])
    book = load_workbook(path)
    book.active.row_dimensions[3].hidden = True
    book.save(path)
    with pytest.raises(RerunRefused, match=r"it is not applied; unhide it to apply it"):
        read_corrections(path)


def test_a_long_number_first_seen_in_an_unread_column_is_still_judged_where_it_is_read(tmp_path):
    # Found by review: the fast reader kept a number's text for the next cell holding the same
    # value, and a column no reader reads keeps a long number's digits as they are (unjudged),
    # so the same 20-digit number in 'requisites' a row later was read without its problem.
    header = ["amount", "currency", "paymentType", "requisites", "name", "userId", "ref"]
    path = _xlsx(
        tmp_path / "payouts.xlsx",
        header,
        ["1500", "XOF", "SIM", "2250700001234", "Kouadio Yao", "u-1", 1e20],
        ["1500", "XOF", "SIM", 1e20, "Aya Kone", "u-2", "x"],
    )
    problems = read_batch_file(path).read_problems
    assert (3, "requisites", "number_lost_digits") in _rules(problems), _rules(problems)
