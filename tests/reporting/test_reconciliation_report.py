"""The reconciliation report: one line per source row, exact amounts, masked requisites."""

from __future__ import annotations

import csv
from decimal import Decimal

from openpyxl import load_workbook

from payflow.ledger import Disposition, RowState, RowView
from payflow.model import display_amount
from payflow.reporting import report_row, write_reconciliation


def _view(**overrides) -> RowView:
    fields = {
        "row_number": 2,
        "external_id": "e-1",
        "disposition": Disposition.NEW,
        "state": RowState.COMPLETED,
        "first_batch_id": "b1",
        "payout_id": "p-1",
        "status_message": None,
        "amount": Decimal("2750.5"),
        "currency": "RUB",
        "payment_type": "SBP",
        "requisites": "79161234567",
        "corrected": False,
        "attempts": 1,
        "reasons": [],
    }
    return RowView(**{**fields, **overrides})


def test_a_report_row_masks_requisites_and_explains_itself():
    row = report_row(_view(first_batch_id="b0", disposition=Disposition.ALREADY_KNOWN), "b1")
    assert row.requisites_masked == "*******4567"
    assert "79161234567" not in repr(row)
    assert "already registered by batch b0" in row.detail

    corrected = report_row(_view(state=RowState.FAILED, corrected=True), "b1")
    assert "corrected by the platform" in corrected.detail


def test_report_files_hold_every_row_with_exact_totals(tmp_path):
    rows = [
        report_row(_view(row_number=3, external_id="e-2", amount=Decimal("0.10")), "b1"),
        report_row(_view(), "b1"),
        report_row(
            _view(
                row_number=4,
                external_id=None,
                disposition=Disposition.REJECTED,
                state=RowState.REJECTED,
                amount=None,
                currency=None,
                payment_type=None,
                requisites=None,
                payout_id=None,
                reasons=["amount: must be positive (amount_positive)"],
            ),
            "b1",
        ),
    ]
    counts = {"COMPLETED": 2, "REJECTED": 1}

    paths = write_reconciliation(tmp_path, "b1", rows, counts, sandbox=True)

    with paths.csv.open(encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert [line["row"] for line in lines] == ["2", "3", "4"]
    assert lines[0]["amount"] == "2750.50" and lines[1]["amount"] == "0.10"
    assert "amount_positive" in lines[2]["detail"]
    workbook = load_workbook(paths.xlsx)
    summary = list(workbook["Summary"].iter_rows(values_only=True))
    assert ("note", "Embedded sandbox: no real money moved.", None, None) in summary
    assert ("RUB", "COMPLETED", 2, "2750.60") in summary
    assert len(list(workbook["Rows"].iter_rows())) == 4


def test_display_amount_never_rounds():
    assert display_amount(Decimal("2750.5")) == "2750.50"
    assert display_amount(Decimal("1500.00")) == "1500"
    assert display_amount(Decimal("12.345")) == "12.345"
