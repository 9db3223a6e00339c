"""A console-only operator's day without dead ends, in headless Chromium at 1280 and 390 px:
corrected details in a rerun, a form that keeps its choice, counts and states in an operator's
words, what a checker sees, the approve page on a phone, and the favicon."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from console_support import (
    CLEAN_ROWS,
    ERROR_ROWS,
    PASSWORD,
    Console,
    batch_csv,
    pay_with_the_engine,
    signed_in,
    upload_clean,
)
from links.browser_support import CHROMIUM_ARGS, require_browser, save_screenshot
from playwright.sync_api import Browser, Page, expect, sync_playwright

from payflow.approvals import record_decision
from payflow.console.paying import IN_PROCESS
from payflow.ledger import RowState
from payflow.ledger.actions import record_action

WIDTHS = {"wide": 1280, "phone": 390}
BAD_ROW = 4  # rr-c-bad-1: requisites ending 2222, "Recipient not found" at the sandbox


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    executable = require_browser()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def browser(chromium: Browser) -> Iterator[Browser]:
    yield chromium
    for context in chromium.contexts:
        context.close()


def _sign_in(browser: Browser, console: Console, name: str) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    page.missing = missing  # type: ignore[attr-defined]
    page.goto(console.url + "/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/batches$"))
    return page


def _shots(page: Page, tmp_path: Path, name: str) -> None:
    for label, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        save_screenshot(page, tmp_path, f"console-{name}-{label}.png")
    page.set_viewport_size({"width": 1280, "height": 900})


def _paid_with_failures(console: Console, prefix: str) -> str:
    """A clean batch mia uploaded, sent and followed to its end by the engine: rows 4 and 5
    failed "Recipient not found", row 6 "Recipient account is blocked"."""
    batch_id = upload_clean(signed_in(console, "mia"), f"{prefix}.csv", prefix)
    pay_with_the_engine(console, batch_id)
    return batch_id


def test_a_console_only_maker_corrects_a_recipient_not_found_row_and_it_is_paid(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use: the failed group said "rerun the row with the corrected details", but the
    # console's rerun always sent the same requisites and failed again; and submitting without
    # ticking "I read why" gave a bare page and lost the chosen rows.
    batch_id = _paid_with_failures(console, "rr")
    maker = _sign_in(browser, console, "mia")
    batch_url = f"{console.url}/batches/{batch_id}"
    maker.goto(batch_url)
    box = maker.locator(f"input.row-box[value='{BAD_ROW}']")
    box.check()
    fix = maker.locator(f"details.fix[data-row='{BAD_ROW}']")
    fix.locator("summary").click()
    expect(fix).to_contain_text("sent to ********2222")
    fix.locator(f"input[name='fix-{BAD_ROW}-requisites']").fill("254712340444")

    # "I read why" not ticked: the page says what is missing, the choice and the typing kept.
    maker.click("#rerun-button")
    expect(maker.locator("#rerun-error")).to_contain_text("Confirm that you read why")
    expect(maker.locator(f"input.row-box[value='{BAD_ROW}']")).to_be_checked()
    expect(maker.locator(f"input[name='fix-{BAD_ROW}-requisites']")).to_have_value("254712340444")
    _shots(maker, tmp_path, "rerun-not-yet")

    # A correction the batch rules refuse is said, with the choice still there.
    maker.fill(f"input[name='fix-{BAD_ROW}-requisites']", "12")
    maker.check("#reasons-read")
    maker.click("#rerun-button")
    expect(maker.locator("#rerun-error")).to_contain_text("Corrections break the batch rules")
    expect(maker.locator(f"input.row-box[value='{BAD_ROW}']")).to_be_checked()

    maker.fill(f"input[name='fix-{BAD_ROW}-requisites']", "254712340444")
    maker.click("#rerun-button")
    # The review: each change masked, and that a second person approves, and why.
    expect(maker.locator("h1")).to_have_text("Review the rerun")
    expect(maker.locator("#changes")).to_contain_text(
        f"corrected: row {BAD_ROW} (rr-c-bad-1): requisites ********0444 (was ********2222)"
    )
    expect(maker.locator("#approval-note")).to_contain_text(
        "waits for a second person (a checker, never you, the maker) before anything is sent"
    )
    expect(maker.locator("#approval-note")).to_contain_text(
        "in the console a checker approves every batch a maker submits (the approvals policy "
        "alone asks for none: 700 KES"
    )
    assert "254712340444" not in maker.locator("#review").inner_text()
    _shots(maker, tmp_path, "rerun-review")
    # Back to change it: the choice and the typing as they were, then reviewed again.
    maker.click("#change-rerun")
    expect(maker.locator(f"input.row-box[value='{BAD_ROW}']")).to_be_checked()
    expect(maker.locator(f"input[name='fix-{BAD_ROW}-requisites']")).to_have_value("254712340444")
    expect(maker.locator("#reasons-read")).to_be_checked()
    maker.click("#rerun-button")
    expect(maker.locator("h1")).to_have_text("Review the rerun")

    maker.click("#submit-rerun")
    expect(maker.locator(".notice")).to_contain_text("a checker must approve it")
    expect(maker.locator("#state")).to_have_text("awaiting approval")
    expect(maker.locator("#states tr[data-state=VALIDATED] td").first).to_have_text(
        "waiting for approval"
    )
    rerun_id = maker.url.split("?")[0].rsplit("/", 1)[-1]
    ledger = console.ctx.ledger
    (attempt,) = [r for r in ledger.batch_rows(rerun_id)]
    sent = ledger.payout_instruction(attempt.external_id or "")
    assert sent is not None and sent.requisites == "254712340444"
    _shots(maker, tmp_path, "rerun-submitted")

    # Paid as corrected: the row's latest attempt completes.
    pay_with_the_engine(console, rerun_id)
    assert ledger.batch_summary(rerun_id) == {RowState.COMPLETED.value: 1}
    assert not maker.missing  # type: ignore[attr-defined]


def test_a_checker_sees_failed_rows_without_boxes_and_a_finished_rerun_without_expiry(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use: checkers saw rerun checkboxes they could not use; a finished rerun's
    # approve page still said "expires ..."; on a phone "batch page" broke as "bat / ch page";
    # every page asked for a missing /favicon.ico.
    batch_id = _paid_with_failures(console, "ck")
    maker = signed_in(console, "mia")
    page = maker.get(f"/batches/{batch_id}").text
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None
    form = {"csrf": token.group(1), "row": ["5"], "reasons_read": "yes"}
    rerun_id = maker.post(f"/batches/{batch_id}/rerun", data=form).headers["location"]
    rerun_id = rerun_id.rsplit("/", 1)[-1]
    # carl approved it and its run paid it to the end, as "Approve and pay" does.
    ledger = console.ctx.ledger
    record_decision(ledger, rerun_id, approver="carl", decision="approve", via="console")
    record_action(ledger, "carl", "approved", rerun_id)
    record_action(ledger, "carl", "pay_started", rerun_id, detail=IN_PROCESS)
    pay_with_the_engine(console, rerun_id)
    record_action(ledger, "carl", "pay_finished", rerun_id, detail="1 final")

    checker = _sign_in(browser, console, "carl")
    checker.goto(f"{console.url}/batches/{batch_id}")
    expect(checker.locator("#failed")).to_contain_text("Recipient account is blocked")
    expect(checker.locator("#failed input")).to_have_count(0)
    expect(checker.locator("#rerun-form")).to_have_count(0)
    expect(checker.locator("#failed")).to_contain_text("A maker chooses rows to rerun")
    _shots(checker, tmp_path, "checker-failed-rows")

    checker.goto(f"{console.url}/batches/{rerun_id}/approve")
    expect(checker.locator("main")).to_contain_text("state finished with failures")
    expect(checker.locator("#expires")).to_have_count(0)
    expect(checker.get_by_text(re.compile("expires"))).to_have_count(0)
    checker.set_viewport_size({"width": 390, "height": 900})
    link = checker.locator("#batch-line a")
    box = link.bounding_box()
    assert box is not None and box["height"] < 30, box  # one line: "batch page" unbroken
    _shots(checker, tmp_path, "approve-finished-rerun")

    icon = checker.request.get(console.url + "/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert not checker.missing  # type: ignore[attr-defined]


def test_counts_before_approval_leave_rejected_rows_out_and_say_states_in_words(
    console: Console, browser: Browser, tmp_path: Path
) -> None:
    # Found by use: before approval the page read "6 of 21 final" with a 28 % bar (rejected
    # rows counted as final) and "3 VALIDATED", a word from the code.
    rows = [(f"cn-{ext}", *rest) for ext, *rest in CLEAN_ROWS] + ERROR_ROWS[:3]
    maker = _sign_in(browser, console, "mia")
    path = tmp_path / "mixed.csv"
    path.write_bytes(batch_csv(rows))
    maker.goto(console.url + "/upload")
    maker.set_input_files("#file", str(path))
    maker.click("#upload-form button[type=submit]")
    expect(maker.locator("#result")).to_be_visible()
    maker.click("text=Submit 5 rows for approval")
    expect(maker.locator("#state")).to_have_text("awaiting approval")
    expect(maker.locator("#final-line")).to_have_text(
        "0 of 5 final · 3 rejected in the file, never sent"
    )
    assert maker.locator("#bar").get_attribute("value") == "0"
    assert maker.locator("#bar").get_attribute("max") == "5"
    states = maker.locator("#states tbody tr td:first-child")
    expect(states).to_have_text(["rejected in the file", "waiting for approval"])
    expect(maker.locator("#states")).not_to_contain_text("VALIDATED")
    _shots(maker, tmp_path, "counts-before-approval")


def test_a_service_that_cannot_answer_a_correction_check_is_said_with_the_choice_kept(
    console: Console,
) -> None:
    # The service's lists check a correction: an API failing then gave a server error page.
    batch_id = _paid_with_failures(console, "sv")
    maker = signed_in(console, "mia")
    page = maker.get(f"/batches/{batch_id}").text
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None
    httpx.post(f"{console.ctx.target.api_url}/_sandbox/faults", json={"fail_first": 50})
    form = {
        "csrf": token.group(1),
        "row": [str(BAD_ROW)],
        "reasons_read": "yes",
        f"fix-{BAD_ROW}-requisites": "254712340444",
        "step": "review",
    }
    refused = maker.post(f"/batches/{batch_id}/rerun", data=form)
    httpx.post(f"{console.ctx.target.api_url}/_sandbox/faults", json={"fail_first": 0})
    assert refused.status_code == 400, refused.text
    assert "could not be asked" in refused.text and "nothing was sent; try again" in refused.text
    assert re.search(rf'value="{BAD_ROW}" data-group="g\d+" class="row-box" checked>', refused.text)
    assert 'value="254712340444"' in refused.text
