"""The reconciliation report: totals equal its rows, a readable workbook, inert cells, a picture."""

from __future__ import annotations

import codecs
import csv
import os
import re
import shutil
import subprocess
import zipfile
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter
from reconcile_support import instruction, move, new_id, pay, payout_id, reconcile, register
from support.docs_images import keep_for_docs
from support.spreadsheet import computed_sheets

from payflow.ledger import Ledger, RejectedRow, RowOutcome
from payflow.reporting import (
    LAYOUT_VERSION,
    ROW_COLUMNS,
    BatchReport,
    summary_markdown,
    write_batch_report,
)

INJECTED_NAME = '=HYPERLINK("http://evil.example","x")'


async def _report(client, ledger: Ledger, out: Path) -> BatchReport:
    rows = [
        instruction(new_id("r"), 2, "0001"),
        instruction(new_id("r"), 3, "0001", name=INJECTED_NAME),
        instruction(new_id("r"), 4, "1111"),
        instruction(new_id("r"), 5, "2222"),
        instruction(new_id("r"), 6, "3333"),
        instruction(new_id("r"), 7, "4444"),
    ]
    rejected = [
        RejectedRow(8, "+cmd", ["@SUM(1,2) amount must be a number"]),
        # A rejected row whose currency cell named a currency is counted under it.
        RejectedRow(10, new_id("kes"), ["amount: amount must be a number"], currency="KES"),
    ]
    batch = register(ledger, rows, rejected)
    await pay(client, ledger, batch)
    # A RUB row registered after paying stays not_sent: it shows a two-decimal amount.
    ledger.register_batch(
        batch,
        "test.csv",
        [instruction(new_id("rub"), 9, "0001", currency="RUB", amount=Decimal("1234.5"))],
        [],
    )
    await reconcile(client, ledger, batch)
    return write_batch_report(ledger, batch, out, sandbox=True)


def _csv_rows(path: Path) -> list[dict[str, str]]:
    # With a BOM, as the rejects report: Excel reads a BOM-less CSV's Cyrillic names as garbage.
    assert path.read_bytes().startswith(codecs.BOM_UTF8)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def _assert_totals_match_rows(report: BatchReport, rows: list[dict[str, str]]) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    amounts: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for row in rows:
        key = (row["currency"] or "(none)", row["outcome"])
        counts[key] += 1
        if row["outcome"] not in ("rejected", "refused"):
            # Such a row shows its file's amount, which no payout of the batch asks for.
            amounts[key] += Decimal(row["amount_asked"] or 0)
    summed: Counter[tuple[str, str]] = Counter()
    for currency in report.summary.currencies:
        for outcome, n in currency.rows.items():
            summed[(currency.currency, outcome.value)] = n
            assert amounts[(currency.currency, outcome.value)] == currency.amount(outcome)
    assert summed == counts


async def test_summary_totals_equal_the_sum_of_the_rows(client, ledger: Ledger, tmp_path) -> None:
    report = await _report(client, ledger, tmp_path)
    rows = _csv_rows(report.csv)
    _assert_totals_match_rows(report, rows)
    assert sum(c.in_file for c in report.summary.currencies) == len(rows) == 9
    by_currency = {c.currency: c for c in report.summary.currencies}
    assert {o.value: n for o, n in by_currency["KES"].rows.items()} == {"rejected": 1}
    assert {o.value: n for o, n in by_currency["(none)"].rows.items()} == {"rejected": 1}
    assert [r["currency"] for r in rows if r["outcome"] == "rejected"] == ["", "KES"]
    xof = next(c for c in report.summary.currencies if c.currency == "XOF")
    assert {o.value: n for o, n in xof.rows.items()} == {
        "paid": 2,
        "failed": 2,
        "canceled": 1,
        "expired": 1,
    }
    assert xof.failed_rate == Decimal("0.6667")
    groups = {
        (g.total.status_message, g.classification.failure_class) for g in report.summary.failures
    }
    assert ("Recipient account is blocked", "do_not_retry") in groups
    assert ("Recipient not found", "fix_details") in groups


def _summary_block(book_path: Path) -> list[dict[str, object]]:
    """The per-currency block of the summary sheet (a figure a line, a currency a column), as
    {figure: value} per currency."""
    lines = list(load_workbook(book_path)["summary"].iter_rows(values_only=True))
    start = next(i for i, line in enumerate(lines) if line[0] == "currency")
    currencies = [name for name in lines[start][1:] if name]
    block: list[dict[str, object]] = [{"currency": c} for c in currencies]
    for line in lines[start + 1 :]:
        if not line or line[0] is None:
            break
        for column, value in zip(block, line[1:], strict=False):
            column[str(line[0])] = value
    return block


def _markdown_block(markdown: str) -> list[dict[str, str]]:
    """The per-currency table of the summary markdown, as {header: value} per currency."""
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    ends = next((i for i, line in enumerate(table[1:], 1) if line.startswith("| currency")), None)
    return [
        dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        for line in table[1:ends]
    ]


async def test_the_summary_adds_up_to_the_batchs_rows(client, ledger: Ledger, tmp_path) -> None:
    # The operator saw rows_in_file 9 but rejected + refused + sent 8: the row never sent (and a
    # row already paid by another batch) had no column of their own.
    paid_before = instruction(new_id("paid"), 2, "0001")
    await pay(client, ledger, register(ledger, [paid_before]))
    # Another amount than the earlier payout's: the same one would be held as a repeat.
    rows = [
        instruction(new_id("r"), 2, "0001", amount=Decimal(40)),
        instruction(new_id("r"), 3, "1111"),
    ]
    batch = register(ledger, [*rows, paid_before._replace(row_number=4)])
    await pay(client, ledger, batch)
    ledger.register_batch(batch, "test.csv", [instruction(new_id("late"), 5, "0001")], [])
    await reconcile(client, ledger, batch)
    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)

    outcomes = Counter(line["outcome"] for line in _csv_rows(report.csv))
    assert outcomes == {"paid": 1, "failed": 1, "duplicate": 1, "not_sent": 1}
    [xof] = _summary_block(report.xlsx)
    assert (xof["not_sent"], xof["duplicate"], xof["sent"]) == (1, 1, 2)
    parts = ("rejected_in_file", "refused", "duplicate", "not_sent", "sent")
    assert xof["rows_in_file"] == sum(int(str(xof[name])) for name in parts) == 4
    assert xof["rows_in_file"] == len(list(ledger.batch_rows(batch)))
    [line] = _markdown_block(summary_markdown(report.summary))
    assert (line["not sent"], line["duplicate"], line["sent"]) == ("1", "1", "2")
    parts = ("rejected", "refused", "duplicate", "not sent", "sent")
    assert line["rows"] == str(sum(int(line[name]) for name in parts)) == "4"


async def test_rows_reusing_a_paid_id_take_nothing_from_that_payout(
    client, ledger: Ledger, tmp_path
) -> None:
    paid_id = new_id("paid")
    earlier = register(ledger, [instruction(paid_id, 2, "0001", amount=Decimal(700))])
    await pay(client, ledger, earlier)
    rows = [
        instruction(new_id("r"), 2, "0001"),
        # Row 4 reuses the paid id with other content: refused, and counted in its own currency.
        instruction(paid_id, 4, "0001", amount=Decimal(999), currency="KES"),
    ]
    batch = register(ledger, rows, [RejectedRow(3, paid_id, ["amount: amount must be a number"])])
    await pay(client, ledger, batch)
    await reconcile(client, ledger, batch)
    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)
    lines = _csv_rows(report.csv)
    _assert_totals_match_rows(report, lines)
    by_currency = {c.currency: c for c in report.summary.currencies}
    # Neither is counted under the earlier payout's XOF, nor its 700 summed anywhere.
    assert {o.value: n for o, n in by_currency["(none)"].rows.items()} == {"rejected": 1}
    assert {o.value: n for o, n in by_currency["KES"].rows.items()} == {"refused": 1}
    assert {o.value: n for o, n in by_currency["XOF"].rows.items()} == {"paid": 1}
    assert by_currency["XOF"].amount(RowOutcome.PAID) == Decimal(10)
    assert [(r["source_row"], r["currency"], r["amount_asked"]) for r in lines] == [
        ("2", "XOF", "10"),
        ("3", "", ""),
        ("4", "KES", "999"),  # its own amount (KES: whole units), not the paid payout's 700
    ]
    # Row 3's id is the earlier batch's payout: "fix the row and upload it again" would only
    # meet that payout as a repeat or a conflict.
    assert lines[1]["next_step"] == (
        f"Its externalId is already a payout of batch {earlier}: look that payout up before "
        "uploading the row again."
    )


async def test_the_workbook_reads_well_in_a_spreadsheet(client, ledger: Ledger, tmp_path) -> None:
    report = await _report(client, ledger, tmp_path)
    book = load_workbook(report.xlsx)
    assert book.sheetnames == ["readme", "summary", "rows", "rejects", "findings"]
    sheet = book["rows"]
    header = [cell.value for cell in sheet[1]]
    assert header == [c.name for c in ROW_COLUMNS]
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == f"A1:{get_column_letter(len(ROW_COLUMNS))}{sheet.max_row}"
    amount = header.index("amount_asked") + 1
    by_currency = {
        sheet.cell(r, header.index("currency") + 1).value: sheet.cell(r, amount)
        for r in range(2, sheet.max_row + 1)
    }
    assert by_currency["XOF"].number_format == "#,##0"
    assert by_currency["RUB"].number_format == "#,##0.00"
    assert by_currency["RUB"].value == pytest.approx(1234.5)
    outcome = sheet.cell(2, header.index("outcome") + 1)
    assert outcome.value == "paid" and outcome.fill.start_color.rgb.endswith("C6EFCE")
    assert sheet.column_dimensions["A"].width == 12
    # Headings over figures sit right, over the figures, as the summary's do: left, they ran
    # into the next heading ("source_rowexternal_id") and read as that column's.
    aligned = {cell.value: cell.alignment.horizontal for cell in sheet[1]}
    assert [aligned[n] for n in ("source_row", "amount_asked", "amount_reported")] == ["right"] * 3
    assert aligned["external_id"] is None
    assert book["rejects"].freeze_panes == "A2"
    # Printed, 19 figures across made a page of tiny print: figures go down, currencies across.
    summary = book["summary"]
    assert summary.max_column == 7
    assert summary.page_setup.fitToWidth == 1 and summary.sheet_properties.pageSetUpPr.fitToPage
    [currency_line] = [
        line for line in summary.iter_rows(values_only=True) if line[0] == "currency"
    ][:1]
    assert currency_line[1:5] == ("(none)", "KES", "RUB", "XOF")
    # Each currency heading sits over its numbers (right), the outcome chart's block included.
    outcome_line = next(line for line in summary.iter_rows() if line[0].value == "outcome")
    assert [c.alignment.horizontal for c in outcome_line[1:4]] == ["right"] * 3
    readme = {row[0]: row[1] for row in book["readme"].iter_rows(values_only=True) if row}
    assert readme["layout_version"] == LAYOUT_VERSION
    # The failures block: a long statusMessage wraps (the rows figure beside it cut it short),
    # its line is tall enough for it, and the figures' headings sit over the figures.
    lines = list(summary.iter_rows())
    heading = next(i for i, line in enumerate(lines) if line[2].value == "status_message")
    names = {cell.value: cell.alignment for cell in lines[heading]}
    assert (names["rows"].horizontal, names["amount"].horizontal) == ("right", "right")
    assert names["class"].indent == 1
    failure = lines[heading + 1]
    assert failure[2].alignment.wrap_text and failure[6].alignment.wrap_text
    # One chart per currency: on one axis an amount in XOF dwarfed the same money in RUB.
    with zipfile.ZipFile(report.xlsx) as archive:
        names = sorted(n for n in archive.namelist() if n.startswith("xl/charts/chart"))
        charts = [archive.read(name).decode() for name in names]
    assert len(charts) == 3
    for chart, currency in zip(charts, ("KES", "RUB", "XOF"), strict=True):
        assert "<barChart>" in chart and "'summary'!" in chart
        assert chart.count("<ser>") == 1 and f"{currency} by outcome" in chart


async def test_the_workbook_prints_readably_and_shows_every_long_text(
    client, ledger: Ledger, tmp_path
) -> None:
    # Printed for approval, the rows sheet ran nine portrait pages across with its columns cut
    # between them, and a next step longer than its column was hidden under the next one.
    report = await _report(client, ledger, tmp_path)
    book = load_workbook(report.xlsx)
    for name, titles, wide in (("readme", None, 1), ("rows", "$1:$1", 3), ("rejects", "$1:$1", 1)):
        sheet = book[name]
        assert sheet.page_setup.orientation == "landscape", name
        assert sheet.sheet_properties.pageSetUpPr.fitToPage, name
        assert (sheet.page_setup.fitToWidth, sheet.page_setup.fitToHeight) == (wide, 0), name
        assert sheet.print_title_rows == titles, name
    assert book["findings"].print_title_rows == "$1:$1"
    # One page across printed the rows sheet's 22 columns at about 31%: three, each page
    # starting with the row's source row and externalId.
    assert book["rows"].print_title_cols == "$A:$B"
    rows = book["rows"]
    header = [cell.value for cell in rows[1]]
    at = {name: header.index(name) for name in ("source_row", "next_step", "outcome")}
    lines = list(rows.iter_rows(min_row=2))
    failed = next(line for line in lines if line[at["outcome"]].value == "failed")
    paid = next(line for line in lines if line[at["outcome"]].value == "paid")
    next_step = failed[at["next_step"]]
    width = rows.column_dimensions[next_step.column_letter].width
    assert len(next_step.value) > width and next_step.alignment.wrap_text
    assert failed[at["source_row"]].alignment.vertical == "top"  # beside the text's first words
    assert rows.row_dimensions[next_step.row].height >= 2 * 15
    # A line of short texts keeps the default height and style.
    assert rows.row_dimensions[paid[0].row].height is None
    assert not paid[at["next_step"]].alignment.wrap_text


async def test_input_cells_are_inert_in_csv_and_text_as_written_in_xlsx(
    client, ledger: Ledger, tmp_path
) -> None:
    report = await _report(client, ledger, tmp_path)
    rows = _csv_rows(report.csv)
    assert any(row["recipient_name"] == "'" + INJECTED_NAME for row in rows)
    rejected = next(row for row in rows if row["outcome"] == "rejected")
    assert rejected["external_id"] == "'+cmd"
    # The reasons follow why the row was never sent, so the cell starts with no trigger.
    assert (
        rejected["detail"] == "never sent: rejected in the file; @SUM(1,2) amount must be a number"
    )
    book = load_workbook(report.xlsx)
    cells = [cell for row in book["rows"].iter_rows() for cell in row]
    cells += [cell for row in book["rejects"].iter_rows() for cell in row]
    assert not [cell for cell in cells if cell.data_type == "f"]
    # In the workbook a string cell is never evaluated: the operator reads the input as it was,
    # not `'=HYPERLINK(...)`.
    texts = {cell.value for cell in cells if cell.data_type == "s"}
    assert {INJECTED_NAME, "+cmd", "@SUM(1,2) amount must be a number"} <= texts
    assert not [t for t in texts if isinstance(t, str) and t.startswith("'")]
    shown = computed_sheets(report.xlsx, tmp_path / "opened")
    header = shown["rows"][0]
    assert INJECTED_NAME in [line[header.index("recipient_name")] for line in shown["rows"][1:]]
    assert ["8", "+cmd", "@SUM(1,2) amount must be a number"] in shown["rejects"]


async def test_a_picture_of_the_summary_sheet(client, ledger: Ledger, tmp_path) -> None:
    soffice, pdftoppm = shutil.which("soffice"), shutil.which("pdftoppm")
    if soffice is None or pdftoppm is None:
        reason = "LibreOffice (soffice) or poppler (pdftoppm) not installed: no summary image"
        if os.environ.get("CI", "").lower() == "true":  # test.sh installs them
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(f"{reason} (bash scripts/install-report-tools.sh)")
    report = await _report(client, ledger, tmp_path)
    book = load_workbook(report.xlsx)
    for name in book.sheetnames:
        book[name].sheet_state = "visible" if name == "summary" else "hidden"
    book.active = book.sheetnames.index("summary")
    only_summary = tmp_path / "summary.xlsx"
    book.save(only_summary)
    subprocess.run(
        [
            soffice,
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(tmp_path),
            str(only_summary),
        ],
        check=True,
        capture_output=True,
        timeout=180,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    pdf = tmp_path / "summary.pdf"
    subprocess.run(
        [pdftoppm, "-png", "-r", "110", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "summary")],
        check=True,
        capture_output=True,
        timeout=60,
    )
    pictures = sorted(tmp_path.glob("summary*.png"))
    assert pictures and pictures[0].stat().st_size > 1000
    keep_for_docs(pictures[0], "report-summary.png")
    print(f"summary sheet image: {pictures[0]}")


async def test_a_status_message_with_control_characters_is_shown_escaped_in_both_files(
    client, ledger: Ledger, sandbox_server, tmp_path
) -> None:
    # The service's statusMessage is not ours: one holding BEL and an ANSI escape made openpyxl
    # refuse the cell, `payflow reconcile` ended "unexpected error" and no report was written.
    batch = register(ledger, [instruction(new_id("ctl"), 2, "0001")], [])
    await pay(client, ledger, batch)
    message = "Reversed\x07 by bank\x1b[31m"
    move(sandbox_server, payout_id(ledger, batch, 2), status="FAILED", statusMessage=message)
    await reconcile(client, ledger, batch)

    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)
    shown = "Reversed\\x07 by bank\\x1b[31m"
    [row] = _csv_rows(report.csv)
    assert row["status_message"] == shown
    texts = {c.value for r in load_workbook(report.xlsx)["rows"].iter_rows() for c in r}
    assert shown in texts


async def test_a_row_never_sent_says_why_not_that_the_service_lost_it(
    client, ledger: Ledger, tmp_path
) -> None:
    # The lookup of a row the batch never sent answers 404: the report read service_status
    # NOT_FOUND, which an operator takes for a payout the service lost.
    paid_id = new_id("paid")
    earlier = register(ledger, [instruction(paid_id, 2, "0001", amount=Decimal(700))])
    await pay(client, ledger, earlier)
    earlier_row = next(iter(ledger.batch_rows(earlier)))
    rows = [
        # The service refuses a SIM payout in USD (400): SUBMIT_REJECTED, nothing made.
        instruction(new_id("usd"), 3, "0001", currency="USD", amount=Decimal(5)),
        # The earlier payout's id with another amount: a conflict, refused before sending.
        instruction(paid_id, 4, "0001", amount=Decimal(999)),
        # The earlier payout's recipient, amount and currency under a new id: held as a repeat.
        instruction(
            new_id("again"), 5, "0001", amount=Decimal(700), requisites=earlier_row.requisites
        ),
    ]
    batch = register(ledger, rows, [RejectedRow(2, new_id("bad"), ["amount: not a number"])])
    await pay(client, ledger, batch)
    # Refused at every try (a balance run out): back to VALIDATED with the service's answer.
    refused = new_id("broke")
    ledger.register_batch(batch, "test.csv", [instruction(refused, 6, "0001")], [])
    [claimed] = ledger.claim_for_submit(batch, "w", 5)
    assert claimed.external_id == refused
    ledger.release_for_retry(refused, worker_id="w", reason="409 INSUFFICIENT_BALANCE")
    # Registered after the pay run: a run that stopped before it.
    ledger.register_batch(batch, "test.csv", [instruction(new_id("late"), 7, "0001")], [])
    await reconcile(client, ledger, batch)
    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)

    lines = {int(r["source_row"]): r for r in _csv_rows(report.csv)}
    assert [lines[n]["outcome"] for n in range(2, 8)] == [
        "rejected",
        "refused",
        "refused",
        "not_sent",
        "not_sent",
        "not_sent",
    ]
    assert {n: lines[n]["service_status"] for n in range(2, 8)} == {
        2: "never sent",
        3: "refused, no payout",
        4: "never sent",
        5: "never sent",
        6: "never sent",
        7: "not sent yet",
    }
    why = {n: lines[n]["detail"] for n in range(2, 8)}
    assert why[2] == "never sent: rejected in the file; amount: not a number"
    assert why[3].startswith("never made: the service refused it")
    assert why[4].startswith("never sent: its externalId is already a payout with other content")
    assert why[5].startswith("never sent: held as a repeat")
    assert why[6].startswith("never sent: the service refused every try")
    assert why[7].startswith("not sent yet: no pay run reached it")
    book = load_workbook(report.xlsx)
    shown = list(book["rows"].iter_rows(values_only=True))
    status_at = shown[0].index("service_status")
    assert "NOT_FOUND" not in [line[status_at] for line in shown[1:]]

    # The summary sheet and the markdown (the Prefect artifact) give the same reasons, counted.
    markdown = summary_markdown(report.summary)
    sheet = list(book["summary"].iter_rows(values_only=True))
    start = next(i for i, line in enumerate(sheet) if line[0] == "Rows never sent, by reason")
    on_sheet = {(line[0], line[2]): line[1] for line in sheet[start + 2 : start + 8]}
    expected = {
        ("(none)", "never sent: rejected in the file"): 1,
        ("USD", "never made: the service refused it (its answer in status_message)"): 1,
    }
    assert expected.items() <= on_sheet.items()
    assert sum(on_sheet.values()) == 6
    for (currency, words), count in expected.items():
        assert f"| {currency} | {count} | {words} |" in markdown
    assert "| XOF | 1 | not sent yet: no pay run reached it" in markdown


async def test_the_markdown_writes_amounts_with_their_currencys_decimals(
    client, ledger: Ledger, tmp_path
) -> None:
    # `payflow reconcile` printed "15.5" and the roll-forward "999999984.5" where every sheet
    # cell reads 15.50.
    row = instruction(
        new_id("dec"), 2, "0001", amount=Decimal("15.5"), currency="EUR", payment_type="EMAIL"
    )
    batch = register(ledger, [row._replace(requisites="awa.kone@example.com")])
    await pay(client, ledger, batch)
    await reconcile(client, ledger, batch)
    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)
    markdown = summary_markdown(report.summary)
    [line] = _markdown_block(markdown)
    assert (line["currency"], line["paid"], line["paid amount"]) == ("EUR", "1", "15.50")
    roll = [line for line in markdown.splitlines() if line.startswith("| EUR |")][-1]
    figures = [cell.strip() for cell in roll.strip("|").split("|")[1:]]
    assert figures and all(re.fullmatch(r"-?\d+\.\d\d", figure) for figure in figures), roll


async def test_every_currency_column_of_the_summary_is_wide_enough_for_its_amounts(
    client, ledger: Ledger, tmp_path
) -> None:
    # Seven currencies: the seventh column kept the default width, and its balance of a
    # billion printed as ### in the sheet and its PDF.
    currencies = ("BDT", "CDF", "EUR", "GHS", "KES", "NGN", "XOF")
    rows = [
        instruction(
            new_id("c"),
            row,
            "0001",
            currency=currency,
            payment_type="EMAIL",
            requisites=f"payee.{row}@example.com",
        )
        for row, currency in enumerate(currencies, start=2)
    ]
    batch = register(ledger, rows)
    await pay(client, ledger, batch)
    await reconcile(client, ledger, batch)
    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)

    summary = load_workbook(report.xlsx)["summary"]
    assert summary.max_column == 1 + len(currencies)
    for row in summary.iter_rows(min_col=2):
        for cell in row:
            if not isinstance(cell.value, int | float) or "#,##0" not in cell.number_format:
                continue
            places = len(cell.number_format.partition(".")[2])
            shown = f"{Decimal(str(cell.value)):,.{places}f}"
            # Unset, a column has the spreadsheet's default width (about 8 characters; openpyxl
            # reads it as 13).
            assert cell.column_letter in summary.column_dimensions, (cell.coordinate, shown)
            width = summary.column_dimensions[cell.column_letter].width
            assert width >= len(shown), (cell.coordinate, shown, width)


async def test_a_failed_payout_is_never_said_to_have_completed(
    client, ledger: Ledger, tmp_path
) -> None:
    # completed_at_utc was filled for FAILED rows too: a failed payout read as completed.
    rows = _csv_rows((await _report(client, ledger, tmp_path)).csv)
    assert not any("completed" in name for name in rows[0])
    by_outcome = {row["outcome"]: row for row in rows}
    for outcome in ("paid", "failed", "canceled", "expired"):
        assert by_outcome[outcome]["final_status_at_utc"].endswith("Z")
    assert by_outcome["rejected"]["final_status_at_utc"] == ""
