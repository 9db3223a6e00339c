"""The links report reads right: input text as written in the workbook (a string cell is never
evaluated), guarded by an apostrophe in the CSV."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from links_support import Clock, write_links_file
from openpyxl import load_workbook
from support.spreadsheet import computed_sheets, cut_short, print_setup

from payflow.links.batch import register_links, report_links
from payflow.links.rows import read_link_rows
from payflow.links.store import LinkStore
from payflow.reporting.workbook import NO_REAL_MONEY_NOTE

HYPERLINK = '=HYPERLINK("http://x","click")'


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LinkStore]:
    opened = LinkStore.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}", clock=Clock())
    yield opened
    opened.close()


def test_formula_like_input_reads_as_written_in_the_workbook(
    store: LinkStore, tmp_path: Path
) -> None:
    rows = [("=1+1", "-5", "10", ""), (HYPERLINK, "@anna", "not a number", "")]
    report = read_link_rows(write_links_file(tmp_path / "links.csv", rows))
    assert [row.external_id for row in report.valid] == ["=1+1"]
    registered = register_links(store, report)
    paths, _ = report_links(store, report.batch_id, tmp_path / "out", sandbox=True)

    with paths.csv.open(encoding="utf-8-sig", newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert [(line["externalId"], line["userId"]) for line in lines] == [
        ("'=1+1", "'-5"),
        ("'" + HYPERLINK, ""),
    ]
    book = load_workbook(paths.xlsx)
    links, rejected = book["Links"], book["Rejected"]
    external_id, user_id = links["B2"], links["C2"]
    assert (external_id.value, external_id.data_type) == ("=1+1", "s")
    assert (user_id.value, user_id.data_type) == ("-5", "s")
    assert (rejected["B2"].value, rejected["B2"].data_type) == (HYPERLINK, "s")
    cells = [c for sheet in (links, rejected) for row in sheet.iter_rows() for c in row]
    assert not [cell for cell in cells if cell.data_type == "f"]
    assert not [c for c in cells if isinstance(c.value, str) and c.value.startswith("'")]
    shown = computed_sheets(paths.xlsx, tmp_path / "opened")
    assert shown["Links"][1][1:3] == ["=1+1", "-5"]
    assert shown["Rejected"][1][1] == HYPERLINK
    assert registered.rejected == 1


def test_every_report_of_a_batch_lists_its_rejected_and_conflicting_rows_once(
    store: LinkStore, tmp_path: Path
) -> None:
    first = read_link_rows(write_links_file(tmp_path / "first.csv", [("g-1", "anna", "10", "")]))
    register_links(store, first)
    rows = [("g-1", "anna", "99", ""), ("g-2", "vera", "10", ""), ("g-3", "ivan", "-1", "")]
    report = read_link_rows(write_links_file(tmp_path / "second.csv", rows))
    register_links(store, report)
    register_links(store, report)  # the same file again: its rejects are not doubled

    paths, figures = report_links(store, report.batch_id, tmp_path / "out", sandbox=True)
    rejected = list(load_workbook(paths.xlsx)["Rejected"].iter_rows(min_row=2, values_only=True))
    assert [(row, ext, rule) for row, ext, _, rule, _ in rejected] == [
        (2, "g-1", "external_id_conflict"),
        (4, "g-3", "amount_positive"),
    ]
    assert figures.rejected == 2 and figures.statuses == {"VALIDATED": 1}
    with paths.csv.open(encoding="utf-8-sig", newline="") as handle:
        claims = [(line["row"], line["claim"]) for line in csv.DictReader(handle)]
    assert [row for row, _ in claims] == ["3", "2", "4"]
    assert [claim for _, claim in claims[1:]] == ["REJECTED", "REJECTED"]


def test_a_batch_whose_every_row_was_rejected_still_has_its_report(
    store: LinkStore, tmp_path: Path
) -> None:
    report = read_link_rows(write_links_file(tmp_path / "bad.csv", [("g-1", "anna", "x", "")]))
    register_links(store, report)
    assert store.batch_exists(report.batch_id)
    paths, figures = report_links(store, report.batch_id, tmp_path / "out", sandbox=True)
    assert figures.rejected == 1 and figures.claims == {}
    assert load_workbook(paths.xlsx)["Rejected"]["B2"].value == "g-1"


def test_no_column_of_the_workbook_cuts_its_values_short(store: LinkStore, tmp_path: Path) -> None:
    # Every column had the default width: ids, expiry times and messages were cut off.
    rows = [("gift-2026-11-27-000001", "client-00042", "1250000.50", ""), ("x", "y", "0", "")]
    report = read_link_rows(write_links_file(tmp_path / "links.csv", rows))
    register_links(store, report)
    paths, _ = report_links(store, report.batch_id, tmp_path / "out", sandbox=True)
    assert cut_short(paths.xlsx) == []


def test_the_workbook_prints_readably_and_shows_every_long_message(
    store: LinkStore, tmp_path: Path
) -> None:
    # The summary printed portrait at the default set-up, and a conflict's reason or a failed
    # payout's statusMessage ran under the next column and off the page.
    first = read_link_rows(write_links_file(tmp_path / "a.csv", [("g-1", "anna", "25", "")]))
    register_links(store, first)
    rows = [("g-1", "anna", "9999", ""), ("g-2", "vera", "30", "")]
    report = read_link_rows(write_links_file(tmp_path / "b.csv", rows))
    register_links(store, report)
    message = "Recipient's bank declined the transfer: account closed or blocked by the bank " * 2
    assert store.record_status("g-2", "pay-2", "FAILED", message)
    paths, _ = report_links(store, report.batch_id, tmp_path / "out", sandbox=True)
    book = load_workbook(paths.xlsx)
    assert print_setup(book["Links"]) == ("landscape", True, 1, 0, "$1:$1")
    assert print_setup(book["Rejected"]) == ("landscape", True, 1, 0, "$1:$1")
    assert print_setup(book["Summary"]) == ("landscape", True, 1, 0, None)
    for sheet, at in ((book["Links"], "M2"), (book["Rejected"], "E2")):
        cell = sheet[at]
        assert len(cell.value) > 100 and cell.alignment.wrap_text, (sheet.title, cell.value)
        assert sheet.row_dimensions[cell.row].height >= 2 * 15
        assert sheet[f"A{cell.row}"].alignment.vertical == "top"


def test_the_summary_says_no_real_money_moved_only_when_the_sandbox_served(
    store: LinkStore, tmp_path: Path
) -> None:
    report = read_link_rows(write_links_file(tmp_path / "links.csv", [("g-1", "anna", "25", "")]))
    register_links(store, report)
    for sandbox, expected in ((True, [("note", NO_REAL_MONEY_NOTE)]), (False, [])):
        paths, _ = report_links(
            store, report.batch_id, tmp_path / f"out-{sandbox}", sandbox=sandbox
        )
        lines = list(load_workbook(paths.xlsx)["Summary"].iter_rows(values_only=True))
        assert [line[:2] for line in lines if line[0] == "note"] == expected


def test_the_summary_names_rows_without_a_payout_as_such_with_their_amounts(
    store: LinkStore, tmp_path: Path
) -> None:
    # The Summary sheet said "VALIDATED 2", the ledger's word, where the screen says "no payout
    # yet", and gave no amount: how much is still to be paid was nowhere in the workbook.
    rows = [("s-1", "anna", "1500.50", ""), ("s-2", "boris", "99.49", "")]
    report = read_link_rows(write_links_file(tmp_path / "links.csv", rows))
    register_links(store, report)
    paths, _ = report_links(store, report.batch_id, tmp_path / "out", sandbox=False)
    lines = list(load_workbook(paths.xlsx)["Summary"].iter_rows(values_only=True))
    at = lines.index(("status", "rows", "amount RUB"))
    assert lines[at + 1] == ("no payout yet", 2, float(Decimal("1599.99")))
    assert not [line for line in lines if "VALIDATED" in line]
