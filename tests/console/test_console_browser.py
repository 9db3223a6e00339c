"""The whole day in headless Chromium: sign in, upload, approve, follow, reconcile, rerun."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import openpyxl
import pytest
from console_support import (
    CLEAN_ROWS,
    ERROR_ROWS,
    PASSWORD,
    Console,
    batch_csv,
    csrf_of,
    pay_with_the_engine,
    paying_in_a_console,
    post_only,
    signed_in,
    upload_clean,
    with_client_in_a_thread,
    workbook,
)
from links.browser_support import CHROMIUM_ARGS, require_browser, save_screenshot
from playwright.sync_api import Browser, Page, expect, sync_playwright
from reused_hashes import one_hash_per_password  # noqa: F401  (see its module)
from support.beats import at_past, dead_run_id
from support.docs_images import keep_for_docs
from support.stats import sandbox_stats

from payflow.api import AsyncPayoutsClient
from payflow.approvals import Pending, approval_status
from payflow.ledger import RejectedRefund, RowState
from payflow.ledger.actions import actions_of
from payflow.ledger.run_beats import batch_beats, beat
from payflow.model import PayoutInstruction
from payflow.reconcile import ReconcileOptions, reconcile_batch
from payflow.reporting import write_batch_report

WIDTHS = {"wide": 1280, "phone": 390}
QUIET = ReconcileOptions(stuck_after={"*": timedelta(hours=1)}, concurrency=4)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """One headless Chromium for the module: each start cost about 1 s of CPU and 3 s."""
    executable = require_browser()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def browser(chromium: Browser) -> Iterator[Browser]:
    """The module's Chromium; the test's pages (each in a context of its own: no cookie of an
    earlier test) are closed after it, so none keeps polling its console."""
    yield chromium
    for context in chromium.contexts:
        context.close()


def _sign_in(browser: Browser, console: Console, name: str) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page.goto(console.url + "/batches")
    expect(page).to_have_url(re.compile(r"/login\?next=/batches$"))
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/batches$"))
    return page


def _shots(page: Page, tmp_path: Path, name: str, *, for_docs: bool = False) -> None:
    """The page at each width; with `for_docs`, the wide one pictures it in the operator guide."""
    for label, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        picture = save_screenshot(page, tmp_path, f"console-{name}-{label}.png")
        if for_docs and label == "wide":
            keep_for_docs(picture, f"console-{name}.png")
    page.set_viewport_size({"width": 1280, "height": 900})


def _upload(page: Page, console: Console, name: str, data: bytes, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    page.goto(console.url + "/upload")
    page.set_input_files("#file", str(path))
    page.click("#upload-form button[type=submit]")
    expect(page.locator("#result")).to_be_visible()


def _download(page: Page, link: str, tmp_path: Path) -> Path:
    with page.expect_download() as info:
        page.click(f"a[href$='{link}']")
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(target)
    return target


@pytest.mark.pays
@pytest.mark.timeout(1500)
def test_console_day(console: Console, browser: Browser, tmp_path: Path) -> None:
    maker = _sign_in(browser, console, "mia")

    _upload(maker, console, "errors.csv", batch_csv(ERROR_ROWS), tmp_path)
    problems = maker.locator("#problems tbody tr")
    expect(problems).to_have_count(3)
    for rule in ("amount_present", "amount_positive", "currency_iso4217"):
        expect(maker.locator("#problems")).to_contain_text(rule)
    rejects = _download(maker, "rejects.xlsx", tmp_path)
    sheet = openpyxl.load_workbook(rejects).active
    assert sheet is not None and sheet.max_row >= 4
    _shots(maker, tmp_path, "upload-errors", for_docs=True)

    _upload(maker, console, "clean.csv", batch_csv(CLEAN_ROWS), tmp_path)
    expect(maker.locator("#problems")).to_have_count(0)
    expect(maker.locator("#totals")).to_contain_text("KES")
    _shots(maker, tmp_path, "upload", for_docs=True)
    maker.click("text=Submit 5 rows for approval")
    expect(maker.locator("#state")).to_have_text("awaiting approval")
    batch_url = maker.url
    batch_id = batch_url.rsplit("/", 1)[-1]

    # The maker cannot approve: the page says so and a forged POST is refused.
    maker.goto(batch_url + "/approve")
    expect(maker.locator("#decide")).to_have_count(0)
    csrf = maker.locator("main").get_attribute("data-csrf") or ""
    refused = maker.request.post(batch_url + "/approve", form={"csrf": csrf, "decision": "approve"})
    assert refused.status == 403

    checker = _sign_in(browser, console, "carl")
    checker.goto(batch_url + "/approve")
    expect(checker.locator("#rules")).to_contain_text("KES total")
    _shots(checker, tmp_path, "approve", for_docs=True)
    checker.fill("textarea[name=note]", "checked against the invoice list")
    checker.click("button[value=approve]")
    expect(checker.locator(".notice")).to_contain_text("payout run started")

    # Progress updates without reloading, then the page reloads into the summary.
    try:
        expect(checker.locator("#final-line")).to_have_text("5 of 5 final", timeout=600_000)
    except AssertionError:
        for action in actions_of(console.ctx.ledger, batch_id):
            print("action:", action)
        raise
    expect(checker.locator("#summary")).to_be_visible(timeout=60_000)
    expect(checker.locator("#state")).to_have_text("finished with failures")
    expect(checker.locator("#failed")).to_contain_text("Recipient not found")
    _shots(checker, tmp_path, "batch", for_docs=True)

    csv_report = _download(checker, "report.csv", tmp_path)
    assert "c-bad-1" in csv_report.read_text(encoding="utf-8")
    xlsx_report = openpyxl.load_workbook(_download(checker, "report.xlsx", tmp_path))
    assert len(xlsx_report.sheetnames) >= 1

    # The maker reruns the "Recipient not found" group after confirming the reasons.
    maker.goto(batch_url)
    group = maker.locator("fieldset.group", has_text="Recipient not found")
    group.locator(".group-toggle").check()
    maker.click("#rerun-button")
    expect(maker.locator("#rerun-error")).to_contain_text("Confirm that you read")
    group = maker.locator("fieldset.group", has_text="Recipient not found")
    maker.check("#reasons-read")
    maker.click("#rerun-button")
    expect(maker.locator("#approval-note")).to_contain_text("a second person")
    maker.click("#submit-rerun")
    expect(maker.locator(".notice")).to_contain_text("a checker must approve it")
    expect(maker.locator("#state")).to_have_text("awaiting approval")
    rerun_url = maker.url.split("?")[0]

    checker.goto(rerun_url + "/approve")
    checker.click("button[value=approve]")
    expect(checker.locator("#final-line")).to_have_text("2 of 2 final", timeout=600_000)
    checker.goto(batch_url)
    expect(checker.locator("#history")).to_contain_text("rerun")
    # The summary now counts the rerun rows by their latest attempt, and says so.
    expect(checker.locator("#latest-note")).to_contain_text("latest attempt")
    # The run wrote its own end, with the ledger's counts, by the checker who started it.
    [end] = [a for a in actions_of(console.ctx.ledger, batch_id) if a.action == "pay_finished"]
    assert end.actor == "carl" and end.detail and "5 final, 0 pending (of 5)" in end.detail


def test_a_workbook_sheet_is_chosen_once_and_each_sheet_reads_by_its_name(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use: the Sheet choice came with "choose the file again", and two sheets of one
    # workbook then read "months.xlsx" alike in the list.
    maker = _sign_in(browser, console, "mia")
    january = [(f"bj-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:2]]
    february = [(f"bf-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:3]]
    path = tmp_path / "months.xlsx"
    path.write_bytes(workbook({"January": january, "February": february}))
    for sheet, rows in (("February", 3), ("January", 2)):
        maker.goto(console.url + "/upload")
        maker.set_input_files("#file", str(path))
        maker.click("#upload-form button[type=submit]")
        expect(maker.locator(".error")).to_contain_text("payout rows on 2 sheets")
        expect(maker.locator("#kept-file")).to_have_text(
            "File: months.xlsx, kept while you choose its sheet."
        )
        if sheet == "February":
            _shots(maker, tmp_path, "sheet-choice")
        maker.select_option("#sheet", sheet)
        maker.click("text=Check this sheet")  # no file chosen again
        expect(maker.locator("#source")).to_have_text(f"months.xlsx, sheet {sheet}")
        expect(maker.locator("#result")).to_contain_text(f"{rows} rows")
    _shots(maker, tmp_path, "sheet-uploaded")

    maker.goto(console.url + "/batches")
    names = maker.locator("table.list tbody tr td:nth-child(2) a")
    expect(names).to_have_text(["months.xlsx, sheet January", "months.xlsx, sheet February"])
    _shots(maker, tmp_path, "sheet-list")
    names.nth(1).click()
    expect(maker.locator("#source")).to_have_text("months.xlsx, sheet February")
    _shots(maker, tmp_path, "sheet-batch")


def test_unsigned_page_redirects_in_the_browser(console: Console, browser: Browser) -> None:
    page = browser.new_page()
    page.goto(console.url + "/upload")
    expect(page).to_have_url(re.compile(r"/login\?next=/upload$"))
    expect(page.locator("h1")).to_have_text("Sign in")


def test_the_approve_page_of_a_rerun_shows_why_each_row_failed_and_warns_of_a_blocked_account(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by hand: a rerun reached the checker with "No warnings" and no statusMessage, though
    # failed rows are rerun only after reading it; a blocked account was sent again unasked.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "rerun.csv", "rr")
    pay_with_the_engine(console, batch_id)
    page = maker.get(f"/batches/{batch_id}").text
    # Row 4 (ends 2222) failed "Recipient not found", row 6 (ends 1111) "...account is blocked".
    form = {"csrf": csrf_of(page), "row": ["4", "6"], "reasons_read": "yes"}
    started = maker.post(f"/batches/{batch_id}/rerun", data=form)
    assert started.status_code == 303, started.text
    rerun_id = started.headers["location"].split("?")[0].rsplit("/", 1)[-1]

    checker = _sign_in(browser, console, "carl")
    checker.goto(f"{console.url}/batches/{rerun_id}/approve")
    # One group per statusMessage and class, the do_not_retry one first, each row listed.
    earlier = checker.locator("#earlier .earlier-group")
    expect(earlier).to_have_count(2)
    expect(checker.locator("#earlier li")).to_have_count(2)
    for text in ("Recipient account is blocked", "do_not_retry", "Row 6", "same requisites"):
        expect(earlier.nth(0)).to_contain_text(text)
    for text in ("Recipient not found", "fix_details", "Row 4", "rr-c-bad-1 ended FAILED"):
        expect(earlier.nth(1)).to_contain_text(text)
    expect(earlier.nth(1).locator("li")).to_be_visible()  # a short group's rows are open
    warnings = checker.locator("#warnings li")
    expect(warnings).to_have_count(1)
    expect(warnings).to_contain_text("rr-c-blk-1-r1 (row 6) sends rr-c-blk-1 again")
    expect(warnings).to_contain_text("do not send again to this one")
    expect(checker.get_by_text("No warnings.")).to_have_count(0)
    _shots(checker, tmp_path, "approve-rerun")

    # Approving without acknowledging the blocked account is refused, and nothing is paid.
    checker.click("button[value=approve]")
    expect(checker.locator(".error")).to_contain_text("acknowledge these warnings to approve")
    assert approval_status(console.ctx.ledger, rerun_id) == Pending(1, ())
    assert console.ctx.ledger.batch_counts(rerun_id).to_send == 2


@pytest.mark.pays
@pytest.mark.timeout(900)
def test_a_pay_run_cut_off_by_a_console_restart_reads_interrupted_and_a_checker_goes_on(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by hand: a console restarted during a pay run left the batch "paying" forever with
    # nothing to resume it; only `payflow pay BATCH` on the command line went on.
    ledger = console.ctx.ledger
    # What the console before the restart left: carl approved, its run claimed two rows, sent
    # the first (the service holds it, the ledger still says SUBMITTING) and died.
    batch_id = paying_in_a_console(console, "restart.csv", "rs", ago=120)
    beat(at_past(ledger, 90), dead_run_id(), batch_id, "the run in a console")
    first, _ = ledger.claim_for_submit(batch_id, "console-before", 2, lease_seconds=0.5)
    post_only(console, first.instruction)

    checker = _sign_in(browser, console, "carl")
    batch_url = f"{console.url}/batches/{batch_id}"
    checker.goto(batch_url)
    expect(checker.locator("#state")).to_have_text("interrupted")
    expect(checker.locator("#interrupted-note")).to_contain_text(
        "3 rows not sent yet, 2 rows being sent when it stopped"
    )
    _shots(checker, tmp_path, "interrupted")
    checker.click("#go-on-form button")
    expect(checker.locator(".notice")).to_contain_text("payout run started")
    expect(checker.locator("#final-line")).to_have_text("5 of 5 final", timeout=600_000)
    expect(checker.locator("#state")).to_have_text("finished with failures", timeout=60_000)

    # Each row was sent once, the one the dead run sent included; a second "go on" sends none.
    sent = sandbox_stats(console.ctx.target.api_url)["createAttempts"]
    assert {ext: sent[ext] for ext in sent if ext.startswith("rs-")} == {
        f"rs-{row[0]}": 1 for row in CLEAN_ROWS
    }
    assert ledger.batch_counts(batch_id).by_state.get(RowState.SUBMITTING.value, 0) == 0
    csrf = checker.locator("#reconcile-form input[name=csrf]").get_attribute("value") or ""
    again = checker.request.post(batch_url + "/go-on", form={"csrf": csrf})
    assert again.status == 409 and "no stopped payout run" in again.text()
    assert [a.action for a in actions_of(ledger, batch_id)].count("pay_started") == 2
    # The run went on beat from its thread and its flow, and said when each ended.
    beats = [b for b in batch_beats(ledger, batch_id) if b.label != "the run in a console"]
    assert [b.label.startswith("flow run ") for b in beats] == [True]
    assert all(b.ended_at is not None for b in batch_beats(ledger, batch_id)[:2])


def test_a_long_rerun_is_grouped_on_the_approve_page_with_every_warning_in_full(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use: a rerun of hundreds of rows listed every row, one after another, on the
    # checker's approve page: the reasons and amounts had to be counted by eye.
    rows = [
        (f"lr-{n}", "100", "KES", "SIM", f"2547{n:04d}2222", "Njeri Wambui", f"u-{n}")
        for n in range(60)
    ] + [
        (f"lb-{n}", "250", "KES", "SIM", f"2547{n:04d}1111", "Mutua Musyoka", f"u-b{n}")
        for n in range(4)
    ]
    maker = signed_in(console, "mia")
    token = csrf_of(maker.get("/upload").text)
    posted = maker.post(
        "/upload", files={"file": ("long.csv", batch_csv(rows))}, data={"csrf": token}
    )
    batch_id = posted.headers["location"].rsplit("/", 1)[-1]
    pay_with_the_engine(console, batch_id)
    # The maker's batch page folds a long group's rows too; its checkbox still takes them all.
    page = _sign_in(browser, console, "mia")
    page.goto(f"{console.url}/batches/{batch_id}")
    group = page.locator("fieldset.group", has_text="Recipient not found")
    expect(group.locator(".row-box").first).to_be_hidden()
    group.locator(".group-toggle").check()
    expect(group.locator(".row-box:checked")).to_have_count(60)
    _shots(page, tmp_path, "batch-long-failures")
    form = {
        "csrf": token,
        "row": [str(n) for n in range(2, 2 + len(rows))],
        "reasons_read": "yes",
    }
    started = maker.post(f"/batches/{batch_id}/rerun", data=form)
    assert started.status_code == 303, started.text
    rerun_id = started.headers["location"].rsplit("/", 1)[-1]

    checker = _sign_in(browser, console, "carl")
    checker.goto(f"{console.url}/batches/{rerun_id}/approve")
    expect(checker.locator("#earlier-count")).to_contain_text("64 rows in 2 groups")
    groups = checker.locator("#earlier .earlier-group")
    expect(groups).to_have_count(2)
    blocked, not_found = groups.nth(0), groups.nth(1)
    expect(blocked.locator("h3")).to_contain_text("4 rows: “Recipient account is blocked”")
    expect(blocked).to_contain_text("1000 KES")  # KES: whole units (issue 36)
    expect(not_found.locator("h3")).to_contain_text("60 rows: “Recipient not found”")
    expect(not_found).to_contain_text("6000 KES")
    # A long group's rows are folded away until asked for; a short one's are open.
    expect(not_found.locator("li").first).to_be_hidden()
    expect(blocked.locator("li").first).to_be_visible()
    # Each blocked account stays a warning of its own, in full.
    warnings = checker.locator("#warnings li")
    expect(warnings).to_have_count(4)
    for n in range(4):
        expect(warnings.nth(n)).to_contain_text(f"lb-{n}-r1")
    _shots(checker, tmp_path, "approve-long-rerun")
    not_found.locator("summary").click()
    expect(not_found.locator("li")).to_have_count(60)
    expect(not_found.locator("li").nth(59)).to_be_visible()


# The widest figures of a day's batch: six-digit rubles to a bank account, XOF without cents.
PHONE_ROWS = [
    (f"ph-{n}", amount, currency, kind, requisites, "Awa Kone", f"u-{n}")
    for n, (amount, currency, kind, requisites) in enumerate(
        [
            ("600000", "RUB", "BANK_ACCOUNT", "40817810000000000012"),
            ("12000", "RUB", "BANK_ACCOUNT", "40817810099910001111"),
            ("15000", "XOF", "SIM", "2250700001234"),
            ("25000", "XOF", "SIM", "2250700003333"),
            ("2500", "KES", "SIM", "254712345678"),
        ],
        start=1,
    )
]


def _hidden_sideways(page: Page) -> list[str]:
    """What a 390 px window shows only when scrolled sideways: a table wider than its box."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.scroll')]
            .filter((box) => box.scrollWidth > box.clientWidth + 1)
            .map((box) => box.querySelector('table').id || box.querySelector('table').className)"""
    )


def test_on_a_phone_no_amount_state_or_total_is_cut_off(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use at 390 px: the totals' Amount column was cut mid-number (XOF 40000 read
    # "4000", RUB 612000.00 "612000.0"), and the batches list showed neither a state nor a
    # total, nor the history its details, unless each table was scrolled sideways.
    maker = _sign_in(browser, console, "mia")
    maker.set_viewport_size({"width": 390, "height": 844})
    _upload(maker, console, "phone.csv", batch_csv(PHONE_ROWS), tmp_path)
    assert _hidden_sideways(maker) == []
    save_screenshot(maker, tmp_path, "console-phone-upload.png")
    maker.click("text=Submit 5 rows for approval")
    expect(maker.locator("#state")).to_have_text("awaiting approval")
    batch_url = maker.url
    assert _hidden_sideways(maker) == []

    checker = _sign_in(browser, console, "carl")
    checker.set_viewport_size({"width": 390, "height": 844})
    for url in (console.url + "/batches", batch_url, batch_url + "/approve"):
        checker.goto(url)
        assert _hidden_sideways(checker) == [], url
        save_screenshot(checker, tmp_path, f"console-phone-{url.rsplit('/', 1)[-1]}.png")
    checker.goto(console.url + "/batches")
    line = checker.locator("table.list tbody tr").first
    expect(line.locator(".state")).to_be_in_viewport()
    expect(line).to_contain_text("612000.00 RUB")


# Where a line may end inside an id or a rule name: after one of its own separators.
SEPARATORS = "-_.:@/~"
MID_WORD_BREAKS = """(selector) => {
  const broken = [];
  for (const cell of document.querySelectorAll(selector)) {
    let top = null, previous = "";
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getClientRects()[0];
        if (!box) continue;
        if (top !== null && box.top > top + 2 && !SEPARATORS.includes(previous)) {
          broken.push(cell.textContent.trim());
        }
        top = box.top;
        previous = node.data[i];
      }
    }
  }
  return broken;
}""".replace("SEPARATORS", repr(SEPARATORS))


def _broken_mid_word(page: Page, *selectors: str) -> list[str]:
    """The cells of `selectors` whose text a line ends in other than after a separator."""
    return [text for s in selectors for text in page.evaluate(MID_WORD_BREAKS, s)]


def test_ids_and_rule_names_wrap_only_at_their_own_separators(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use: at 390 px the rejects table broke rule names mid-word (`amount_posit` /
    # `ive`), and at 1200 px the refund page's externalId column wrapped inside an id
    # (`rf-sample-11` / `11`).
    book = console.ctx.ledger.refunds
    why = (
        "amount: the order was paid 1500.00 RUB and the file asks another amount; only full "
        "refunds are made, so leave the amount empty or write the order's (amount_differs)"
    )
    rejected = [
        RejectedRefund(n, f"rf-sample-{n}111", f"0b8f3c2e-5a1d-4e6b-9f7a-10000000{n:04d}", [why])
        for n in range(2, 8)
    ]
    book.register_batch("refunds-wrap", "refunds.csv", [], rejected)
    console.ctx.ledger.set_maker("refunds-wrap", "mia")
    paid = upload_clean(signed_in(console, "mia"), "paid.csv", "wrap-sample")
    pay_with_the_engine(console, paid)
    page = _sign_in(browser, console, "mia")
    for width in (1200, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{console.url}/batches/{paid}")
        expect(page.locator("#amounts-table")).to_contain_text("4000")
        assert _broken_mid_word(page, "label.chip span") == [], width
        assert _hidden_sideways(page) == [], width
        save_screenshot(page, tmp_path, f"console-paid-batch-{width}.png")

        page.goto(f"{console.url}/batches/refunds-wrap")
        expect(page.locator("#not-refunded tbody tr")).to_have_count(6)
        cells = ("#not-refunded td:nth-child(2)", "#not-refunded td:nth-child(3)")
        assert _broken_mid_word(page, *cells) == [], width
        assert _hidden_sideways(page) == [], width
        save_screenshot(page, tmp_path, f"console-refund-ids-{width}.png")

        _upload(page, console, "errors.csv", batch_csv(ERROR_ROWS), tmp_path)
        expect(page.locator("#problems tbody tr")).to_have_count(3)
        assert (
            _broken_mid_word(page, "#problems td:nth-child(2)", "#problems td:nth-child(3)") == []
        ), width
        assert _hidden_sideways(page) == [], width
        save_screenshot(page, tmp_path, f"console-rule-names-{width}.png")


def test_the_batch_page_of_moved_payouts_reads_as_the_service_says(
    console: Console, browser: Browser, tmp_path: Path, sandbox_server
) -> None:
    """Payouts the platform moved after the run (a reversal, a failure it paid after all, one
    back to PROCESSING, an amount changed) read on the batch page as the service says, once
    reconciled; the paid-after-failure row is offered for no rerun; an acknowledgement shows."""
    ledger = console.ctx.ledger
    ends = ((2, "0001"), (3, "1111"), (4, "0001"), (5, "0001"), (6, "2222"))
    rows = [
        PayoutInstruction(
            n, f"moved-{n}", Decimal(1000 * n), "XOF", "SIM", f"2250799{n:02d}{last4}", "A", f"u{n}"
        )
        for n, last4 in ends
    ]
    ledger.register_batch("moved", "moved.csv", rows, [])
    pay_with_the_engine(console, "moved")
    ids = {r.row_number: r.payout_id for r in ledger.batch_rows("moved")}
    for row, body in (
        (2, {"status": "CANCELED"}),
        (3, {"status": "COMPLETED"}),
        (4, {"status": "PROCESSING"}),
        (5, {"amount": "4500"}),
    ):
        httpx.post(
            f"{sandbox_server.url}/_sandbox/payouts/{ids[row]}/status", json=body, timeout=10
        ).raise_for_status()

    async def reconciled(client: AsyncPayoutsClient) -> None:
        await reconcile_batch(client, ledger, "moved", QUIET)

    with_client_in_a_thread(console, reconciled)
    first = ledger.findings("moved")[0]
    ledger.acknowledge_finding("moved", first.id, actor="carl", note="asked the platform")

    write_batch_report(
        ledger, "moved", console.ctx.batch_dir("moved"), sandbox=True, made_by="carl"
    )

    page = _sign_in(browser, console, "mia")
    page.goto(f"{console.url}/batches/moved")
    versions = page.locator("#report-versions")
    expect(versions).to_contain_text("carl")
    expect(versions).to_contain_text("first version")
    chart = page.locator("#summary svg")
    for outcome in (
        "paid (corrected from failed)",
        "not paid (corrected after completion)",
        "pending at the service",
    ):
        expect(chart).to_contain_text(outcome)
    paid = page.locator("#amounts-table tr[data-currency=XOF] td").nth(1)
    expect(paid).to_contain_text("7500")  # rows 3 and 5, at the amount the service holds now
    expect(paid).to_contain_text("2 rows")
    expect(page.locator("#findings")).to_contain_text("carl at ")
    expect(page.locator("#findings")).to_contain_text("asked the platform")
    # Only the row that truly failed is offered for a rerun: row 3 was paid after all.
    groups = page.locator("#failed").inner_text()
    assert "Recipient not found" in groups and "Recipient account is blocked" not in groups
    assert "row 6" in groups and "row 3" not in groups
    page.click("#report-versions summary")  # open, for the screenshot
    save_screenshot(page, tmp_path, "console-batch-moved-payouts.png")


def test_the_upload_and_batch_pages_name_each_conflict_row_and_no_one_is_warned_of_it(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use: the upload page read "1 rejected" for a row whose externalId an earlier
    # batch holds with another amount, naming neither the row, the batch nor the column, and
    # listed the amount outlier warning of that row, which is never sent.
    first = upload_clean(signed_in(console, "mia"), "first.csv", "cf")
    again = [
        ("cf-c-ok-1", "150000", "KES", "SIM", "254712340001", "Wanjiru Kamau", "u-1"),
        ("cf2-n-1", "1000", "KES", "SIM", "254712347001", "Achieng Odhiambo", "u-7"),
        ("cf2-n-2", "1500", "KES", "SIM", "254712347002", "Kamau Njoroge", "u-8"),
        ("cf2-n-3", "2000", "KES", "SIM", "254712347003", "Chebet Rono", "u-9"),
    ]
    maker = _sign_in(browser, console, "mia")
    _upload(maker, console, "again.csv", batch_csv(again), tmp_path)
    result = maker.locator("#result")
    expect(result).to_contain_text("3 to pay, 0 rejected, 1 refused as a conflict")
    conflicts = maker.locator("#conflicts")
    expect(conflicts).to_contain_text("never sent (1 row)")
    expect(conflicts).to_contain_text("cf-c-ok-1")
    expect(conflicts).to_contain_text(f"registered by batch {first} (row 2) with different amount")
    expect(conflicts).to_contain_text("150000 here, 1500 before")
    expect(conflicts.locator(f"a[href='/batches/{first}']")).to_have_text(first)
    # The outlier is that row's only warning: never sent, so nobody is warned of it.
    expect(maker.locator("#upload-warnings")).to_have_count(0)
    expect(result).to_contain_text("The row refused as a conflict is never sent")
    _shots(maker, tmp_path, "upload-conflict")
    maker.set_viewport_size({"width": 390, "height": 844})
    assert _hidden_sideways(maker) == []
    maker.set_viewport_size({"width": 1280, "height": 900})

    maker.click("text=Submit 3 rows for approval")
    expect(maker.locator("#state")).to_have_text("awaiting approval")
    expect(maker.locator("#conflicts")).to_contain_text("with different amount")
    # Not "1 rejected in the file": the upload page said it passed every rule.
    expect(maker.locator("#final-line")).to_have_text(
        "0 of 3 final · 1 refused as a conflict, never sent"
    )
    _shots(maker, tmp_path, "batch-conflict")
    batch_url = maker.url.split("?")[0]
    checker = _sign_in(browser, console, "carl")
    checker.goto(batch_url + "/approve")
    expect(checker.locator("#totals")).to_contain_text("4500")  # the 3 rows to send
    expect(checker.locator("#warnings")).to_have_count(0)
    assert "cf-c-ok-1" not in checker.locator("main").inner_text()
    _shots(checker, tmp_path, "approve-conflict")


def test_the_batch_page_says_how_many_payouts_are_not_yet_rechecked_until_reconciled(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # `payflow run` and `payflow status` said "5 payouts not yet re-checked against the
    # service" and when that happens; the batch page read as if its figures were final.
    batch_id = upload_clean(signed_in(console, "mia"), "recheck.csv", "rk")
    pay_with_the_engine(console, batch_id)
    page = _sign_in(browser, console, "carl")
    page.goto(f"{console.url}/batches/{batch_id}")
    line = page.locator("#not-rechecked")
    expect(line).to_contain_text("5 payouts not yet re-checked against the service")
    expect(line).to_contain_text("“Reconcile now” on this page re-fetches them")
    _shots(page, tmp_path, "batch-not-rechecked")
    page.click("#reconcile-form button")
    expect(page.locator(".notice")).to_contain_text("5 payouts fetched again")
    expect(page.locator("#not-rechecked")).to_have_count(0)
