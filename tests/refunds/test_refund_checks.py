"""Every rule of a refund file is reported at once, then each order is checked with the service."""

from __future__ import annotations

import pytest
from openpyxl import Workbook
from refunds_support import make_client, paid_orders, run_refunds, write_refunds

from payflow.intake import BatchFileError
from payflow.ledger import RowState
from payflow.refunds.checks import check_refund_file
from payflow.refunds.intake import read_refund_file, refund_file_from_rows
from payflow.refunds.steps import prepare_refunds
from payflow.schemas.refund_schema import refund_problems

ORDER = "0b8f3c2e-5a1d-4e6b-9f7a-100000000001"
OTHER = "0b8f3c2e-5a1d-4e6b-9f7a-100000000002"


def _rules(rows: list[list[str]]) -> set[tuple[int, str, str]]:
    file = refund_file_from_rows(
        [["orderId", "externalId", "amount", "reason", "callbackUrl"], *rows]
    )
    return {(p.row, p.column, p.rule) for p in refund_problems(file.frame)}


def test_every_file_rule_is_reported_at_once_with_row_column_and_rule():
    found = _rules(
        [
            ["not-a-uuid", "e-1", "", "", ""],  # row 2
            ["", "e-2", "", "", ""],  # row 3
            [ORDER, "x" * 256, "", "", ""],  # row 4
            [OTHER, "e-4", "12.345", "r" * 1001, "ftp://x"],  # row 5
            ["0b8f3c2e-5a1d-4e6b-9f7a-100000000003", "e-5", "0", "line\nbreak", ""],  # row 6
            [ORDER, "e-6", "", "", ""],  # row 7: same order as row 4
            ["0b8f3c2e-5a1d-4e6b-9f7a-100000000004", "e-1", "", "", ""],  # row 8: e-1 again
            [" 0b8f3c2e-5a1d-4e6b-9f7a-100000000005", "e-9", "", "", ""],  # row 9: pasted
        ]
    )
    # A UUID pasted with a space is named for its space: it read "orderId must be a UUID".
    assert (9, "orderId", "order_id_spaces") in found
    assert (9, "orderId", "order_id_uuid") not in found
    assert {
        (2, "orderId", "order_id_uuid"),
        (3, "orderId", "order_id_present"),
        (4, "externalId", "external_id_length"),
        (4, "orderId", "order_id_unique"),
        (7, "orderId", "order_id_unique"),
        (5, "amount", "amount_format"),
        (5, "reason", "reason_length"),
        (5, "callbackUrl", "callback_url_format"),
        (6, "amount", "amount_positive"),
        (6, "reason", "no_control_characters"),
        (2, "externalId", "external_id_unique"),
        (8, "externalId", "external_id_unique"),
    } <= found


def test_a_clean_file_has_no_problems_and_gets_derived_ids_without_the_column():
    file = refund_file_from_rows([["Order ID", "Reason"], [ORDER, "ok"], [OTHER, ""]])
    assert refund_problems(file.frame) == []
    assert file.derived_ids
    derived = file.frame.at[2, "externalId"]
    assert derived.startswith("rf-") and derived.endswith("-1")
    # The id is the row's own: another file with other rows and reasons gives it the same id.
    other = refund_file_from_rows([["Reason", "Order ID"], ["changed", OTHER], ["x", ORDER]])
    assert other.batch_id != file.batch_id
    assert other.frame.at[3, "externalId"] == derived


def test_an_order_id_is_lower_cased_only_when_it_is_a_uuid():
    # The service names its orders in lower case, so a UUID in capitals is read so; a cell
    # rejected as no UUID was lower-cased too, and the report showed what nobody wrote.
    file = refund_file_from_rows([["orderId"], [ORDER.upper()], ["ORDER-0001X"]])
    assert file.frame.at[2, "orderId"] == ORDER.lower()
    assert file.frame.at[3, "orderId"] == "ORDER-0001X"
    assert [p.rule for p in refund_problems(file.frame)] == ["order_id_uuid"]


def test_a_semicolon_file_from_russian_excel_reads_its_amounts_as_a_payout_file_does(tmp_path):
    # `1 250,50` was rejected as amount_format, though a payout file of the same Excel is read.
    russian = tmp_path / "russian.csv"
    russian.write_text(f"orderId;amount\n{ORDER};1 250,50\n{OTHER};12,5\n", encoding="utf-8")
    plain = tmp_path / "plain.csv"
    plain.write_text(f"orderId,amount\n{ORDER},1250.50\n", encoding="utf-8")
    read = read_refund_file(russian)
    assert read.frame["amount"].tolist() == ["1250.50", "12.5"]
    assert refund_problems(read.frame) == []
    # The same refund as the plain file's: its derived externalId does not change.
    assert read.frame.at[2, "externalId"] == read_refund_file(plain).frame.at[2, "externalId"]
    # A comma file is never read so: there `1,5` may be a thousands separator.
    comma = tmp_path / "comma.csv"
    comma.write_text(f'orderId,amount\n{ORDER},"12,5"\n', encoding="utf-8")
    assert {p.rule for p in refund_problems(read_refund_file(comma).frame)} == {"amount_format"}


def test_a_file_without_an_order_column_cannot_be_used(tmp_path):
    path = write_refunds(tmp_path / "r.csv", [["e-1", "x"]], header=["externalId", "reason"])
    with pytest.raises(BatchFileError, match="required column missing: orderId"):
        read_refund_file(path)


async def test_orders_are_checked_unknown_not_completed_amount_and_already_refunded(
    sandbox, ledger, tmp_path
):
    good, refunded, other_amount = paid_orders(sandbox, 3, amount="100.00")
    created = "0b8f3c2e-5a1d-4e6b-9f7a-100000000006"  # a demo order still CREATED
    first = write_refunds(tmp_path / "first.csv", [[refunded, "first-0001", "", "", ""]])
    await run_refunds(first, sandbox, ledger)
    rows = [
        [good, "c-0001", "100", "", ""],
        ["0b8f3c2e-5a1d-4e6b-9f7a-0000000000ff", "c-0002", "", "", ""],
        [created, "c-0003", "", "", ""],
        [other_amount, "c-0004", "99.99", "", ""],
        [refunded, "c-0005", "", "", ""],
    ]
    file = read_refund_file(write_refunds(tmp_path / "second.csv", rows))
    async with make_client(sandbox) as client:
        checked = await check_refund_file(file, client, ledger.refunds)
    rules = {(p.row, p.rule) for p in checked.rejects}
    assert rules == {
        (3, "order_unknown"),
        (4, "order_not_completed"),
        (5, "amount_differs"),
        (6, "order_already_refunded"),
    }
    assert [i.external_id for i in checked.instructions] == ["c-0001"]


async def test_a_failed_refund_is_sent_again_only_under_a_written_external_id(
    sandbox, ledger, tmp_path
):
    # Found by hand: after rf-f-1111 failed, the same file without its externalId column
    # refunded the order again under a derived id, and nothing said it was a retry.
    [order] = paid_orders(sandbox, 1, amount="100.00")
    first = write_refunds(tmp_path / "first.csv", [[order, "rf-f-1111", "", "", ""]])
    prepared, _ = await run_refunds(first, sandbox, ledger)
    derived = read_refund_file(
        write_refunds(tmp_path / "second.csv", [[order, ""]], header=["orderId", "reason"])
    )
    written = read_refund_file(
        write_refunds(tmp_path / "third.csv", [[order, "again-1", "", "", ""]])
    )
    async with make_client(sandbox) as client:
        refused = await check_refund_file(derived, client, ledger.refunds)
        allowed = await check_refund_file(written, client, ledger.refunds)
    [problem] = refused.rejects
    assert (problem.row, problem.rule) == (2, "refund_failed_before")
    assert problem.message == (
        f"the order's refund rf-f-1111 (batch {prepared.batch_id}) ended FAILED; to refund it "
        "again on purpose, write a new externalId in the row"
    )
    assert refused.instructions == []
    assert [i.external_id for i in allowed.instructions] == ["again-1"]


async def test_an_order_id_in_capitals_is_the_same_order(sandbox, ledger, tmp_path):
    # It was rejected as "no such order for this merchant (order_unknown)".
    [order] = paid_orders(sandbox, 1)
    file = read_refund_file(
        write_refunds(tmp_path / "r.csv", [[order.upper(), "up-1", "", "", ""]])
    )
    async with make_client(sandbox) as client:
        checked = await check_refund_file(file, client, ledger.refunds)
    assert checked.rejects == []
    assert [i.order_id for i in checked.instructions] == [order]


async def test_an_order_id_a_lookup_failed_to_fill_is_rejected_once_and_kept(
    sandbox, ledger, tmp_path
):
    # Found by hand: an XLSX orderId showing #N/A was called "orderId must be a UUID", the
    # error never named. Read as nothing, the row must still reach the ledger (not be dropped
    # as blank) with the one reason, not also "orderId is required"; a hidden empty row, dropped
    # as blank while its hidden_row reject stayed, ended the run "unexpected error (KeyError)".
    [order] = paid_orders(sandbox, 1)
    book = Workbook()
    sheet = book.active
    for row in (["orderId", "reason"], ["#N/A", ""], [order, "recall"], [None, None]):
        sheet.append(row)  # openpyxl stores "#N/A" as an error cell, as Excel saves it
    sheet.row_dimensions[4].hidden = True
    book.save(tmp_path / "r.xlsx")
    async with make_client(sandbox) as client:
        prepared = await prepare_refunds(tmp_path / "r.xlsx", client, ledger)
    rejects = prepared.validation.rejects
    assert [(p.row, p.column, p.rule) for p in rejects] == [
        (2, "orderId", "formula_error"),
        (4, "", "hidden_row"),
        (4, "orderId", "order_id_present"),
    ]
    assert [i.order_id for i in prepared.validation.instructions] == [order]
    rows = list(ledger.refunds.rows(prepared.batch_id))
    assert [(r.row_number, r.state) for r in rows] == [
        (2, RowState.REJECTED),
        (3, RowState.VALIDATED),
        (4, RowState.REJECTED),
    ]


async def test_a_refund_batch_records_the_sheet_it_was_read_from(sandbox, ledger, tmp_path):
    # A payout batch did (batches.sheet: `payflow status` and the console show 'year.xlsx,
    # sheet Q1'); a refund batch read from a sheet of a workbook recorded the file name alone.
    [order] = paid_orders(sandbox, 1)
    book = Workbook()
    book.active.title = "notes"
    book.create_sheet("Q1").append(["orderId"])
    book["Q1"].append([order])
    book.save(tmp_path / "year.xlsx")
    async with make_client(sandbox) as client:
        prepared = await prepare_refunds(tmp_path / "year.xlsx", client, ledger, sheet="Q1")
    header = ledger.batch_header(prepared.batch_id)
    assert header is not None and header.sheet == "Q1"
    assert header.source == "year.xlsx, sheet Q1"


def test_a_windows_1251_file_says_how_it_was_read_as_a_payout_file_does(tmp_path):
    # Read as Windows-1251 with no word, while a payout file of the same Excel is told: a
    # reason in another alphabet may read wrong.
    path = tmp_path / "cp1251.csv"
    path.write_bytes(f"orderId;reason\n{ORDER};Отмена\n".encode("cp1251"))
    read = read_refund_file(path)
    assert read.frame.at[2, "reason"] == "Отмена"
    assert [n.rule for n in read.notices] == ["read_as_windows_1251"]
    assert (
        read_refund_file(write_refunds(tmp_path / "r.csv", [[ORDER, "", "", "", ""]])).notices == []
    )


async def test_a_row_rejected_for_its_cells_still_learns_what_its_order_says(
    sandbox, ledger, tmp_path
):
    # A reason too long hid that the order was not COMPLETED: the operator shortened the reason,
    # ran the file again, and only then learned the row could not be refunded at all.
    good, fine, mine = paid_orders(sandbox, 3, amount="100.00")
    created = "0b8f3c2e-5a1d-4e6b-9f7a-100000000006"  # a demo order still CREATED
    unknown = "0b8f3c2e-5a1d-4e6b-9f7a-0000000000ff"
    twice = "0b8f3c2e-5a1d-4e6b-9f7a-0000000000fe"
    first = write_refunds(tmp_path / "first.csv", [[mine, "mine-0001", "", "", ""]])
    await run_refunds(first, sandbox, ledger)
    rows = [
        [created, "m-0001", "", "r" * 1001, ""],
        [unknown, "m-0002", "12.345", "", ""],
        [good, "m-0003", "abc", "", "ftp://x"],
        [twice, "m-0004", "", "", ""],
        [twice, "m-0005", "", "", ""],
        ["not-a-uuid", "m-0006", "", "r" * 1001, ""],
        [mine, "mine-0001", "", "r" * 1001, ""],
        [fine, "m-0008", "100", "", ""],
    ]
    file = read_refund_file(write_refunds(tmp_path / "second.csv", rows))
    async with make_client(sandbox) as client:
        checked = await check_refund_file(file, client, ledger.refunds)
    found: dict[int, set[tuple[str, str]]] = {}
    for p in checked.rejects:
        found.setdefault(p.row, set()).add((p.column, p.rule))
    assert found == {
        2: {("reason", "reason_length"), ("orderId", "order_not_completed")},
        3: {("amount", "amount_format"), ("orderId", "order_unknown")},
        # A rejected amount is not compared with the order's, nor its row refunded.
        4: {("amount", "amount_format"), ("callbackUrl", "callback_url_format")},
        # Shared by two rows, the id still names an order.
        5: {("orderId", "order_id_unique"), ("orderId", "order_unknown")},
        6: {("orderId", "order_id_unique"), ("orderId", "order_unknown")},
        # No UUID names no order to look up: its own rule says it all.
        7: {("orderId", "order_id_uuid"), ("reason", "reason_length")},
        # The ledger's refund of this order is this row's own: not "already refunded".
        8: {("reason", "reason_length")},
    }
    assert [i.external_id for i in checked.instructions] == ["m-0008"]
    assert checked.known == 0
