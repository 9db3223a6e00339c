"""A missing required column: the message lists the headers found and says where the header
seems to be (a title row above it, another sheet) (issue 7, item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from intake_files import HEADER, ROW, write_csv, write_xlsx
from openpyxl import Workbook

from payflow.intake import BatchFileError, read_batch_file


def test_the_message_lists_the_headers_found(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "b.csv", [["Сумма", "Валюта", "amount"], ["1", "RUB", "1"]])
    with pytest.raises(BatchFileError) as raised:
        read_batch_file(path)
    assert "required column missing: currency, paymentType" in str(raised.value)
    assert "headers found in row 1: Сумма, Валюта, amount" in str(raised.value)


def test_a_title_row_above_the_header_is_pointed_at(tmp_path: Path) -> None:
    rows: list[list[object]] = [["Выплаты за ноябрь"], [], HEADER, ROW]
    with pytest.raises(BatchFileError, match="row 3 looks like the header: delete the title"):
        read_batch_file(write_xlsx(tmp_path / "b.xlsx", rows))
    csv_rows = [["Payouts, November", "", "", "", "", "", ""], HEADER, ROW]
    with pytest.raises(BatchFileError, match="row 2 looks like the header"):
        read_batch_file(write_csv(tmp_path / "b.csv", csv_rows))


def test_another_sheet_holding_the_data_is_named(tmp_path: Path) -> None:
    workbook = Workbook()
    cover = workbook.active
    assert cover is not None
    cover.title = "cover"
    cover.append(["Batch of 2026-11-23", "approved by"])
    data = workbook.create_sheet("payouts")
    data.append(HEADER)
    data.append(ROW)
    workbook.save(tmp_path / "b.xlsx")
    with pytest.raises(BatchFileError, match=r"sheet 'payouts' seems to hold the data .* --sheet"):
        read_batch_file(tmp_path / "b.xlsx")
    assert read_batch_file(tmp_path / "b.xlsx", "payouts").frame.loc[2].tolist() == ROW


def test_a_refund_or_links_file_given_as_a_payout_batch_names_its_own_command(
    tmp_path: Path,
) -> None:
    # They read "required column missing: currency, paymentType, requisites, name", which sent
    # the operator to add payout columns to a refund or links file.
    order = "0b8f3c2e-5a1d-4e6b-9f7a-100000000001"
    refunds = write_csv(tmp_path / "refunds.csv", [["Order ID", "amount"], [order, "10"]])
    with pytest.raises(BatchFileError) as raised:
        read_batch_file(refunds)
    assert str(raised.value).endswith(
        "an orderId column is a refund file's: refunds are made by `payflow refund refunds.csv`"
    )
    gifts = [["externalId", "userId", "amount", "serviceId"], ["g-1", "u-1", "10", ""]]
    with pytest.raises(BatchFileError) as raised:
        read_batch_file(write_xlsx(tmp_path / "gifts.xlsx", gifts))
    assert str(raised.value).endswith(
        "externalId, userId and amount alone are a payout links file's: recipients' links are "
        "issued by `payflow links gifts.xlsx`"
    )
    # A payout file short of a column is told only what it lacks.
    with pytest.raises(BatchFileError) as raised:
        read_batch_file(write_csv(tmp_path / "b.csv", [["amount", "userId"], ["1", "u"]]))
    assert "payflow refund" not in str(raised.value)
    assert "payflow links" not in str(raised.value)
