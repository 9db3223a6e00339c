"""The refund report reads right: input text as written in the workbook (a string cell is never
evaluated), guarded by an apostrophe in the CSV."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

from openpyxl import load_workbook
from support.spreadsheet import cut_short, print_setup

from payflow.ledger import Disposition, RefundRowView
from payflow.ledger.states import RowState
from payflow.refunds.report import HEADER, write_refund_report


def _rejected(external_id: str, order_id: str, reasons: list[str]) -> RefundRowView:
    """A row the checks refused: nothing sent, so nothing of the service in it."""
    unset = "refund_id amount currency debit_amount debit_currency debit_basis status_message"
    return RefundRowView(
        row_number=2,
        external_id=external_id,
        order_id=order_id,
        disposition=Disposition.REJECTED,
        state=RowState.REJECTED,
        corrected=False,
        reasons=reasons,
        **dict.fromkeys([*unset.split(), "order_status", "first_batch_id"]),
    )


def test_formula_like_input_reads_as_written_in_the_workbook(tmp_path: Path) -> None:
    view = _rejected("@r-1", "=1+1", ["-orderId: no such order"])
    paths = write_refund_report(tmp_path, "b-cells", [view], sandbox=True)

    with paths.csv.open(encoding="utf-8-sig", newline="") as handle:
        [line] = list(csv.DictReader(handle))
    assert (line["orderId"], line["externalId"]) == ("'=1+1", "'@r-1")
    assert line["findings"] == "'-orderId: no such order"
    rows = load_workbook(paths.xlsx)["Rows"]
    cells = dict(zip(HEADER, rows[2], strict=True))
    shown = [(cells[n].value, cells[n].data_type) for n in ("orderId", "externalId", "findings")]
    assert shown == [("=1+1", "s"), ("@r-1", "s"), ("-orderId: no such order", "s")]


def test_no_column_of_the_workbook_cuts_its_values_short(tmp_path: Path) -> None:
    # Every column had the default width: ids ran under the next column and the summary read
    # "COMPLETE" for COMPLETED and "refund bat" for the batch's label.
    view = RefundRowView(
        row_number=2,
        external_id="rf-3f1c9d0e8b7a6c5d4e3f2a1b-1",
        order_id="0b8f3c2e-5a1d-4e6b-9f7a-100000000001",
        disposition=Disposition.NEW,
        state=RowState.MANUAL,
        refund_id="a4a1e2c7-4075-4851-aceb-afd4dc5122eb",
        amount=Decimal("1250000.50"),
        currency="RUB",
        debit_amount=Decimal("1250000.50"),
        debit_currency="RUB",
        debit_basis="MERCHANT_RECEIVED",
        status_message=None,
        order_status="COMPLETED",
        corrected=False,
        first_batch_id=None,
        reasons=[],
    )
    paths = write_refund_report(tmp_path, "b-widths", [view], sandbox=False)
    assert cut_short(paths.xlsx) == []


def test_the_workbook_prints_readably_and_shows_every_long_reason(tmp_path: Path) -> None:
    # The summary printed portrait at the default set-up, and a refused row's reasons ran
    # under the next column and off the page.
    reasons = [
        "orderId: the ledger holds a refund of this order (rf-3f1c9d0e8b7a6c5d4e3f2a1b-1)",
        "amount: the amount differs from the order's 1500.00 RUB (amount_differs)",
    ]
    view = _rejected("rf-long", "0b8f3c2e-5a1d-4e6b-9f7a-100000000001", reasons)
    paths = write_refund_report(tmp_path, "b-print", [view], sandbox=True)
    book = load_workbook(paths.xlsx)
    assert print_setup(book["Rows"]) == ("landscape", True, 1, 0, "$1:$1")
    assert print_setup(book["Summary"]) == ("landscape", True, 1, 0, None)
    rows = book["Rows"]
    cells = dict(zip(HEADER, rows[2], strict=True))
    assert cells["findings"].value == "; ".join(reasons) and cells["findings"].alignment.wrap_text
    assert rows.row_dimensions[2].height >= 2 * 15
    assert cells["orderId"].alignment.vertical == "top"
