"""The batches list (newest first, paged) and a checker's decline, over HTTP."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from console_support import (
    CLEAN_ROWS,
    ERROR_ROWS,
    Console,
    approved_and_paid,
    batch_csv,
    csrf_of,
    pay_with_the_engine,
    paying_in_a_console,
    register_rows,
    signed_in,
    start_console,
    upload_clean,
    workbook,
)
from prefect import get_client
from prefect.client.schemas.sorting import FlowRunSort
from prefect.settings import PREFECT_API_URL, temporary_settings
from reused_hashes import one_hash_per_password  # noqa: F401  (see its module)
from support.operators import actor, set_ledger_policy
from support.postgres import fresh_postgres_database
from support.stats import sandbox_stats

from payflow.acts import decide, submit
from payflow.approvals import Declined, Pending, approval_status, record_decision
from payflow.ledger import (
    CreatedRefund,
    Detected,
    EventSource,
    FindingKind,
    IntakeWarning,
    RejectedRefund,
    RowState,
)
from payflow.ledger.actions import actions_of, record_action
from payflow.model import PayoutInstruction, RefundInstruction
from payflow.paying.run_end import FAILED
from payflow.refunds.report import NO_REFUND_REASON


def _text(page: str) -> str:
    """The page without the line breaks it allows inside ids and rule names (`<wbr>`)."""
    return page.replace("<wbr>", "")


def _listed(html: str) -> list[str]:
    return re.findall(r'<a href="/batches/([0-9a-f]+)">', html)


def test_the_batches_list_is_newest_first_and_paged(console: Console) -> None:
    console.ctx.page_size = 2
    maker = signed_in(console, "mia")
    first, second, third = (upload_clean(maker, f"day-{n}.csv", f"p{n}") for n in (1, 2, 3))

    page_one = maker.get("/batches").text
    assert _listed(page_one) == [third, second]
    assert "page 1 of 2" in page_one and 'href="/batches?page=2"' in page_one
    assert "day-3.csv" in page_one and "mia" in page_one

    page_two = maker.get("/batches?page=2").text
    assert _listed(page_two) == [first]
    assert "page 2 of 2" in page_two and 'href="/batches?page=1"' in page_two
    # A page number that is not one shows the first page rather than an error.
    assert _listed(maker.get("/batches?page=x").text) == [third, second]
    # Past the last page it goes to the last one: it read "No batches yet".
    past = maker.get("/batches?page=999")
    assert past.status_code == 303 and past.headers["location"] == "/batches?page=2"


def test_a_declined_batch_pays_nothing_and_says_who_declined_and_why(console: Console) -> None:
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "decline.csv", "d")
    batch_page = maker.get(f"/batches/{batch_id}").text
    submitted = maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(batch_page)})
    assert submitted.status_code == 303

    # Under every limit, yet the console asks a checker: `payflow pay` paid it before one saw it.
    assert approval_status(console.ctx.ledger, batch_id) == Pending(1, ())
    checker = signed_in(console, "carl")
    form = checker.get(f"/batches/{batch_id}/approve").text
    note = "amounts do not match the invoice list"
    declined = checker.post(
        f"/batches/{batch_id}/approve",
        data={"csrf": csrf_of(form), "decision": "decline", "note": note},
        follow_redirects=True,
    )
    assert declined.status_code == 200
    assert "declined: nothing will be paid" in declined.text
    assert note in declined.text and "carl" in declined.text

    counts = console.ctx.ledger.batch_counts(batch_id)
    assert dict(counts.by_state) == {RowState.VALIDATED.value: len(CLEAN_ROWS)}
    actions = [a.action for a in actions_of(console.ctx.ledger, batch_id)]
    assert "pay_started" not in actions
    assert re.search(r'id="state"[^>]*>declined<', declined.text)
    # Recorded where every payer reads it: kept only in the console's history, the decline
    # let `payflow pay` pay the batch.
    assert approval_status(console.ctx.ledger, batch_id) == Declined("carl", note)
    again = maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(batch_page)})
    assert again.status_code == 409 and "is declined" in again.text


def test_a_broken_settings_file_is_one_clear_page_not_a_crash(
    console: Console, tmp_path: Path
) -> None:
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "table.csv", "t")
    table = tmp_path / "classes.csv"
    table.write_text("status,message_pattern,class\nFAILED,,retryable\n", encoding="utf-8")
    console.ctx.settings = console.ctx.settings.model_copy(update={"failure_classes_path": table})

    page = maker.get(f"/batches/{batch_id}")
    assert page.status_code == 500
    assert "A settings file cannot be used" in page.text and "the header must be" in page.text
    assert "Traceback" not in page.text


def test_a_batch_paid_or_declined_from_the_command_line_reads_as_such(console: Console) -> None:
    # Found by hand: a batch paid by `payflow run` read "nothing to pay" with its open paid_twice
    # finding hidden, and one declined with `payflow approve --decline` offered "Submit".
    ledger = console.ctx.ledger
    paid = register_rows(ledger, "clipaid", "cli-paid-2", "cli-paid-3")
    ledger.claim_for_submit(paid, "w", 10)
    ledger.mark_created("cli-paid-2", "p-2", "COMPLETED", None)
    ledger.mark_created("cli-paid-3", "p-3", "FAILED", "Recipient not found")
    detail = "2 payouts for one source row: a (COMPLETED), b (COMPLETED)"
    found = [Detected(2, "cli-paid-2", FindingKind.PAID_TWICE, detail)]
    ledger.sync_findings(paid, found, unchecked_rows=set())
    declined = register_rows(ledger, "clideclined", "cli-declined-2")
    ledger.set_maker(declined, "mia")
    record_decision(ledger, declined, approver="carl", decision="decline", note="wrong month")

    checker = signed_in(console, "carl")
    page = _text(checker.get(f"/batches/{paid}").text)
    assert re.search(r'id="state"[^>]*>finished with failures<', page), page
    assert 'id="findings"' in page and "paid_twice" in page
    page = checker.get(f"/batches/{declined}").text
    assert re.search(r'id="state"[^>]*>declined<', page)
    assert (
        f'action="/batches/{declined}/submit"'
        not in signed_in(console, "mia").get(f"/batches/{declined}").text
    )


def test_reconcile_now_asks_the_service_and_shows_what_it_found(console: Console) -> None:
    # The README listed "reconcile" among the console's actions, but there was none: a payout
    # the platform corrected stayed "paid" on the page until someone ran `payflow reconcile`.
    ledger = console.ctx.ledger
    batch_id = register_rows(ledger, "cliunknown", "cli-unknown-2")
    ledger.claim_for_submit(batch_id, "w", 10)
    ledger.mark_created("cli-unknown-2", "no-such-payout", "COMPLETED", None)
    checker = signed_in(console, "carl")
    page = checker.get(f"/batches/{batch_id}").text
    assert 'id="reconcile-form"' in page and "missing_at_service" not in page

    done = checker.post(
        f"/batches/{batch_id}/reconcile", data={"csrf": csrf_of(page)}, follow_redirects=True
    )
    assert done.status_code == 200
    assert "reconciled: 1 payout fetched again, 0 rows moved, 1 finding open" in done.text
    assert 'id="findings"' in done.text and "missing_at_service" in _text(done.text)
    assert [a.action for a in actions_of(ledger, batch_id)][-1] == "reconciled"


def _one_step_rules(console: Console, tmp_path: Path) -> Path:
    """Approval rules asking one step of every batch, in the console's settings."""
    rules = tmp_path / "approvals.yaml"
    rules.write_text('currencies:\n  "*":\n    bands:\n      - {steps: 1}\n', encoding="utf-8")
    set_ledger_policy(console.ctx.ledger, rules)  # the policy is ledger data
    return rules


@pytest.mark.pays
def test_a_batch_approved_on_the_command_line_is_paid_by_the_checker_who_approves_it_here(
    console: Console, tmp_path: Path
) -> None:
    # Approved with `payflow approve`, it stayed "awaiting approval" here; a checker's approval
    # was refused as "already approved", and nothing in the console would pay it.
    _one_step_rules(console, tmp_path)
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "both.csv", "both")
    page = maker.get(f"/batches/{batch_id}").text
    assert (
        maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)}).status_code == 303
    )
    record_decision(console.ctx.ledger, batch_id, approver="bob", decision="approve")

    checker = signed_in(console, "carl")
    # Said on both pages: the state alone read as if nobody had approved it yet.
    note = "Approved on the command line by bob; nothing is paid until a checker here chooses"
    assert note in checker.get(f"/batches/{batch_id}").text
    form = checker.get(f"/batches/{batch_id}/approve").text
    assert "Every approval step was given on the command line, by bob" in form
    approved = checker.post(
        f"/batches/{batch_id}/approve", data={"csrf": csrf_of(form), "decision": "approve"}
    )
    assert approved.status_code == 303, approved.text
    deadline = time.monotonic() + 240
    # Until the run has written its end: the run's thread must not outlive the console.
    while not {"pay_finished", "pay_failed"} & {
        a.action for a in actions_of(console.ctx.ledger, batch_id)
    }:
        assert time.monotonic() < deadline, "the pay run did not end"
        time.sleep(0.5)
    counts = console.ctx.ledger.batch_counts(batch_id)
    assert counts.to_send == 0 and counts.pending == 0
    actions = [a.action for a in actions_of(console.ctx.ledger, batch_id)]
    assert "pay_started" in actions and "pay_finished" in actions
    # carl started the paying and approved nothing: the history read "carl approved".
    page = checker.get(f"/batches/{batch_id}").text
    history = _table(page, "history")
    assert "<td>carl</td><td>started paying</td><td>approved by bob before</td>" in history
    assert "<td>carl</td><td>approved</td>" not in history
    assert "<td>bob</td><td>approved</td>" in history
    listed = checker.get("/batches").text.split(f"/batches/{batch_id}", 1)[1].split("</tr>")[0]
    assert "bob" in listed and "carl" not in listed


def test_a_batch_with_held_rows_says_how_to_release_them(console: Console) -> None:
    # A rerun that repeats a recent payout is now held; the page showed "HELD 1" and nothing more.
    ledger = console.ctx.ledger
    paid = register_rows(ledger, "heldfirst", "held-first-2")
    ledger.claim_for_submit(paid, "w", 10)
    ledger.mark_created("held-first-2", "p-held", "COMPLETED", None)
    again = register_rows(ledger, "heldagain", "held-again-2")  # same recipient and amount
    assert ledger.batch_counts(again).held == 1
    page = signed_in(console, "carl").get(f"/batches/{again}").text
    assert 'id="held-note"' in page
    assert f"payflow pay {again} --allow-repeat" in page


def test_a_file_with_a_row_another_batch_paid_can_still_be_submitted(console: Console) -> None:
    # A row already paid elsewhere counted as "sent": the new batch read "finished with rows
    # pending", offered "Reconcile now" and no Submit, so its new rows could never be paid here.
    maker = signed_in(console, "mia")
    first = upload_clean(maker, "first.csv", "k")
    ledger = console.ctx.ledger
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("k-c-ok-1", "p-k1", "COMPLETED", None)

    # The first row as paid; the others new, to other people (else held as repeats: the same
    # userId or name paid the same amount is one, whatever the requisites).
    paid_row = (f"k-{CLEAN_ROWS[0][0]}", *CLEAN_ROWS[0][1:])
    others = [
        (f"k2-{ext}", amount, cur, kind, req[:-5] + "9" + req[-4:], f"{name} II", f"{user}-2")
        for ext, amount, cur, kind, req, name, user in CLEAN_ROWS[1:]
    ]
    rows = [paid_row, *others]
    token = csrf_of(maker.get("/upload").text)
    maker.post("/upload", files={"file": ("again.csv", batch_csv(rows))}, data={"csrf": token})
    [again] = [b for b in _listed(maker.get("/batches").text) if b != first]
    page = maker.get(f"/batches/{again}").text
    assert re.search(r'id="state"[^>]*>uploaded<', page), page
    assert f'action="/batches/{again}/submit"' in page


def test_the_approve_page_shows_the_warning_the_maker_saw_at_upload(console: Console) -> None:
    # Found by an operator walk: the upload warned the maker that a row was more than 20 times
    # the batch median, and the checker's approve page said "No warnings."
    rows = [
        (f"out-{n}", amount, "KES", "SIM", f"2547123{n:02d}001", "Wanjiru Kamau", f"u-{n}")
        for n, amount in enumerate(["100", "100", "100", "5000"], start=1)
    ]
    maker = signed_in(console, "mia")
    token = csrf_of(maker.get("/upload").text)
    posted = maker.post(
        "/upload", files={"file": ("odd.csv", batch_csv(rows))}, data={"csrf": token}
    )
    assert "20 times the batch median" in maker.get(posted.headers["location"]).text
    [batch_id] = _listed(maker.get("/batches").text)
    token = csrf_of(maker.get(f"/batches/{batch_id}").text)
    assert maker.post(f"/batches/{batch_id}/submit", data={"csrf": token}).status_code == 303

    page = signed_in(console, "carl").get(f"/batches/{batch_id}/approve").text
    warnings = page.split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert "out-4 (row 5): amount is more than 20 times the batch median for KES" in warnings
    assert "No warnings." not in page
    assert "I read the warnings" in page


def _table(html: str, table_id: str) -> str:
    return html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]


def test_a_sent_batch_shows_its_totals_on_the_approve_page_and_in_the_list(
    console: Console,
) -> None:
    # Found by hand: once a batch was sent its approve page showed an empty Totals table and the
    # list read "-": both counted only the rows not sent yet.
    ledger = console.ctx.ledger
    batch_id = register_rows(ledger, "clitotals", "cli-tot-2", "cli-tot-3")
    ledger.claim_for_submit(batch_id, "w", 10)
    ledger.mark_created("cli-tot-2", "p-tot-2", "COMPLETED", None)
    ledger.mark_created("cli-tot-3", "p-tot-3", "FAILED", "Recipient not found")
    assert ledger.batch_counts(batch_id).to_pay == ()

    checker = signed_in(console, "carl")
    page = checker.get(f"/batches/{batch_id}/approve").text
    totals = _table(page, "totals")
    # Rows 2 and 3 pay 2000 and 3000 XOF: paid or failed, they are the batch's figures.
    assert re.search(r"<td>XOF</td><td>SIM</td><td[^>]*>2</td><td[^>]*>5000</td>", totals), totals
    # ...and an approval would send none of them again.
    assert "Nothing to send when approved: every row is held or already has a payout" in page
    listed = checker.get("/batches").text
    line = listed.split(f"/batches/{batch_id}", 1)[1].split("</tr>", 1)[0]
    assert "<td>5000 XOF</td>" in line, line


def test_whole_ruble_amounts_show_their_kopecks_on_the_approve_page_and_in_the_list(
    console: Console,
) -> None:
    # The pages read "250" beside the report's 250.00 (RUB has two decimals; XOF none).
    ledger = console.ctx.ledger
    rub = PayoutInstruction(
        row_number=2,
        external_id="cli-rub-2",
        amount=Decimal(250),
        currency="RUB",
        payment_type="EMAIL",
        requisites="awa.kone@example.org",
        name="Awa Kone",
        user_id="u-2",
    )
    ledger.register_batch("clirub", "cli.csv", [rub], [])
    checker = signed_in(console, "carl")
    totals = _table(checker.get("/batches/clirub/approve").text, "totals")
    assert re.search(r"<td>RUB</td><td>EMAIL</td><td[^>]*>1</td><td[^>]*>250.00</td>", totals)
    listed = checker.get("/batches").text
    assert "<td>250.00 RUB</td>" in listed.split("/batches/clirub", 1)[1].split("</tr>", 1)[0]


def test_the_history_shows_approvals_given_outside_the_console_and_each_decision_once(
    console: Console, tmp_path: Path
) -> None:
    # Found by hand: the history showed the console's own actions only, so a batch approved
    # with `payflow approve` or declined in Prefect's form had none.
    _one_step_rules(console, tmp_path)
    ledger = console.ctx.ledger
    approved = register_rows(ledger, "cliapproved", "cli-appr-2")
    declined = register_rows(ledger, "cliprefect", "cli-pref-2")
    for batch_id in (approved, declined):
        ledger.set_maker(batch_id, "mia")
    note = "matches invoice <12>"
    record_decision(ledger, approved, approver="bob", decision="approve", note=note)
    record_decision(ledger, declined, approver="eve", decision="decline", via="prefect")

    checker = signed_in(console, "carl")
    history = _table(checker.get(f"/batches/{approved}").text, "history")
    assert re.search(
        r"<td>bob</td><td>approved</td><td>on the command line \(payflow approve\); "
        r"note: matches invoice &lt;12&gt;</td>",
        history,
    ), history
    history = _table(checker.get(f"/batches/{declined}").text, "history")
    assert "<td>eve</td><td>declined</td><td>in the pay run&#39;s Prefect form</td>" in history

    # A decision taken here is an approval record and a console action: one line, not two.
    maker = signed_in(console, "mia")
    here = upload_clean(maker, "here.csv", "h")
    maker.post(f"/batches/{here}/submit", data={"csrf": csrf_of(maker.get("/upload").text)})
    form = checker.get(f"/batches/{here}/approve").text
    checker.post(
        f"/batches/{here}/approve",
        data={"csrf": csrf_of(form), "decision": "decline", "note": "wrong month"},
    )
    history = _table(checker.get(f"/batches/{here}").text, "history")
    assert history.count("declined") == 1, history
    assert "<td>carl</td><td>declined</td><td>in the console; note: wrong month</td>" in history


@pytest.mark.pays
def test_a_pay_run_that_stopped_before_its_end_can_be_gone_on_with_by_a_checker(
    console: Console,
) -> None:
    # A run stopped by the service (a balance that ran out before the first payout) read "pay
    # run stopped" with its rows unsent and nothing in the console to pay them once fixed.
    ledger = console.ctx.ledger
    batch_id = paying_in_a_console(console, "stopped.csv", "stp")
    maker = signed_in(console, "mia")
    reason = "run calm-owl failed: the balance does not cover XOF 5,000"
    record_action(ledger, "carl", FAILED, batch_id, detail=reason)

    page = maker.get(f"/batches/{batch_id}").text
    assert re.search(r'id="state"[^>]*>pay run stopped<', page)
    assert "Left: 5 rows not sent yet." in page and "A checker goes on paying it" in page
    assert 'id="go-on-form"' not in page  # a maker has no button
    checker = signed_in(console, "carl")
    page = checker.get(f"/batches/{batch_id}").text
    went_on = checker.post(f"/batches/{batch_id}/go-on", data={"csrf": csrf_of(page)})
    assert went_on.status_code == 303, went_on.text

    deadline = time.monotonic() + 240
    while [a.action for a in actions_of(ledger, batch_id)][-1] not in ("pay_finished", FAILED):
        assert time.monotonic() < deadline, "the pay run did not end"
        time.sleep(0.5)
    counts = ledger.batch_counts(batch_id)
    assert counts.to_send == 0 and counts.pending == 0
    sent = sandbox_stats(console.ctx.target.api_url)["createAttempts"]
    assert {ext: n for ext, n in sent.items() if ext.startswith("stp-")} == {
        f"stp-{row[0]}": 1 for row in CLEAN_ROWS
    }
    page = checker.get(f"/batches/{batch_id}").text
    assert 'id="go-on-form"' not in page
    again = checker.post(f"/batches/{batch_id}/go-on", data={"csrf": csrf_of(page)})
    assert again.status_code == 409


@pytest.mark.pays
def test_a_checker_pays_a_batch_from_a_ledger_whose_url_holds_a_password(
    console: Console, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The console gave its pay run the ledger's URL with the password hidden ("***"): a ledger
    # behind a password could not be paid from the console. Nor may the password itself go
    # into the run's parameters, which Prefect keeps and shows.
    with fresh_postgres_database() as url:
        with_password = url.replace("postgres@", "postgres:s3cret-pw@", 1)
        assert "s3cret-pw" in with_password  # trust auth here: carried, not checked
        monkeypatch.setenv("PAYFLOW_LEDGER_URL", with_password)  # as `payflow console` reads it
        there = start_console(
            tmp_path / "pw",
            console.ctx.target.api_url,
            prefect_api_url=console.ctx.prefect_api_url,
            ledger_url=with_password,
        )
        try:
            batch_id = approved_and_paid(there, "pw.csv", "pw")
            counts = there.ctx.ledger.batch_counts(batch_id)
            assert counts.by_state.get("COMPLETED") == 2, counts  # c-ok-1, c-ok-2
            assert counts.to_send == 0 and counts.pending == 0
        finally:
            there.server.stop()
            there.ctx.ledger.close()

    async def parameters() -> str:
        async with get_client() as client:
            runs = await client.read_flow_runs(limit=50, sort=FlowRunSort.START_TIME_DESC)
        return json.dumps([run.parameters for run in runs], default=str)

    with temporary_settings({PREFECT_API_URL: console.ctx.prefect_api_url}):
        seen = asyncio.run(parameters())
    assert batch_id in seen  # the pay run was read
    assert "s3cret-pw" not in seen and "***" not in seen


def test_a_notice_comes_from_the_console_never_from_the_link(console: Console) -> None:
    # Found by use: /batches/<id>?notice=Approved,%20all%20paid showed "Approved, all paid" in
    # the console's notice box, so a link from anyone made the console say anything.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "notice.csv", "n")
    forged = maker.get(f"/batches/{batch_id}", params={"notice": "Approved, all paid"}).text
    assert "Approved, all paid" not in forged and 'class="notice"' not in forged

    page = maker.get(f"/batches/{batch_id}").text
    maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)})
    checker = signed_in(console, "carl")
    form = checker.get(f"/batches/{batch_id}/approve").text
    declined = checker.post(
        f"/batches/{batch_id}/approve", data={"csrf": csrf_of(form), "decision": "decline"}
    )
    assert declined.headers["location"] == f"/batches/{batch_id}"  # nothing to forge in it
    shown = checker.get(f"/batches/{batch_id}").text
    assert '<p class="notice" role="status">declined: nothing will be paid</p>' in shown
    # Said once, to the checker who acted: not on a reload, not to the maker.
    assert 'class="notice"' not in checker.get(f"/batches/{batch_id}").text
    assert 'class="notice"' not in maker.get(f"/batches/{batch_id}").text


def test_an_upload_redirects_so_a_refresh_does_not_post_the_file_again(console: Console) -> None:
    # Found by use: the upload POST rendered its result itself, so the browser's refresh (or
    # Back, then Forward) posted the file again: a second "uploaded" line in the history.
    maker = signed_in(console, "mia")
    token = csrf_of(maker.get("/upload").text)
    rows = [(f"prg-{ext}", *rest) for ext, *rest in CLEAN_ROWS]
    posted = maker.post(
        "/upload", files={"file": ("prg.csv", batch_csv(rows))}, data={"csrf": token}
    )
    assert posted.status_code == 303
    shown = posted.headers["location"]
    batch_id = shown.rsplit("/", 1)[-1]
    assert shown == f"/upload/{batch_id}"
    for _ in range(2):  # what a refresh does now: the page read again, nothing posted
        page = maker.get(shown).text
        assert "prg.csv" in page and f"Submit {len(CLEAN_ROWS)} rows for approval" in page
    uploads = [a for a in actions_of(console.ctx.ledger, batch_id) if a.action == "uploaded"]
    assert len(uploads) == 1
    # Once submitted, the page read again says so instead of offering Submit a second time.
    maker.post(f"/batches/{batch_id}/submit", data={"csrf": token})
    page = maker.get(shown).text
    assert 'id="submitted-note"' in page and "for approval</button>" not in page
    # Another browser has no result of its own to show: the batch page has the state.
    other = signed_in(console, "mark").get(shown)
    assert other.status_code == 303 and other.headers["location"] == f"/batches/{batch_id}"


def test_the_reruns_of_a_batch_are_told_apart_on_its_page(console: Console) -> None:
    # Found by use: every rerun link read the batch's own first 16 characters ("4f1c...a9e2…"),
    # since a rerun's id starts with its batch's: two reruns looked the same.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "reruns.csv", "rl")
    pay_with_the_engine(console, batch_id)
    rerun_ids = []
    for row in ("4", "5"):  # both failed "Recipient not found"
        page = maker.get(f"/batches/{batch_id}").text
        form = {"csrf": csrf_of(page), "row": [row], "reasons_read": "yes"}
        started = maker.post(f"/batches/{batch_id}/rerun", data=form)
        assert started.status_code == 303, started.text
        rerun_ids.append(started.headers["location"].rsplit("/", 1)[-1])

    listed = maker.get(f"/batches/{batch_id}").text.split('id="reruns"', 1)[1].split("</ul>")[0]
    links = re.findall(
        r'<li><a href="/batches/([^"]+)">([^<]+)</a> <span[^>]*>([^<]+)</span>', listed
    )
    assert [link[0] for link in links] == rerun_ids
    assert [link[1] for link in links] == ["Rerun 1", "Rerun 2"]
    assert [link[2] for link in links] == ["…" + r[r.rindex("-rerun-") :] for r in rerun_ids]
    assert len({link[2] for link in links}) == 2
    assert listed.count("1 row, awaiting approval") == 2


def test_a_workbook_to_choose_a_sheet_of_says_so_in_console_words(console: Console) -> None:
    # Found by use: a workbook with payouts on two sheets was refused with "choose one with
    # --sheet NAME", a command line flag the console's operator has nowhere to type.
    maker = signed_in(console, "mia")
    january = [(f"jan-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:2]]
    february = [(f"feb-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:3]]
    data = workbook({"January": january, "February": february})
    token = csrf_of(maker.get("/upload").text)
    refused = maker.post("/upload", files={"file": ("months.xlsx", data)}, data={"csrf": token})
    assert refused.status_code == 400
    assert "--sheet" not in refused.text
    assert "payout rows on 2 sheets" in refused.text and "Choose the sheet below" in refused.text
    assert re.findall(r"<option>([^<]+)</option>", refused.text) == ["January", "February"]

    chosen = maker.post(
        "/upload",
        files={"file": ("months.xlsx", data)},
        data={"csrf": token, "sheet": "February"},
        follow_redirects=True,
    )
    assert chosen.status_code == 200 and "<strong>3</strong> rows" in chosen.text

    # A first sheet without the columns, the data on another: that sheet is offered.
    data = workbook({"Read me": [], "payouts": january})
    hinted = maker.post("/upload", files={"file": ("notes.xlsx", data)}, data={"csrf": token})
    assert hinted.status_code == 400 and "--sheet" not in hinted.text
    assert "sheet &#39;payouts&#39; seems to hold the data" in hinted.text
    assert re.findall(r"<option>([^<]+)</option>", hinted.text) == ["payouts"]


def test_two_sheets_of_one_workbook_read_as_two_batches_by_their_sheets(console: Console) -> None:
    # Found by use: both batches read "months.xlsx" in the list, on their pages and on the
    # upload's result, so which one was January's could be told only by opening them.
    maker = signed_in(console, "mia")
    january = [(f"sj-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:2]]
    february = [(f"sf-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:3]]
    data = workbook({"January": january, "February": february})
    token = csrf_of(maker.get("/upload").text)
    ids = {}
    for sheet in ("January", "February"):
        uploaded = maker.post(
            "/upload",
            files={"file": ("months.xlsx", data)},
            data={"csrf": token, "sheet": sheet},
            follow_redirects=True,
        )
        assert f'<h2 id="source">months.xlsx, sheet {sheet}</h2>' in uploaded.text
        ids[sheet] = re.findall(r"batch ([0-9a-f]+)</p>", uploaded.text)[0]
    upload_clean(maker, "plain.csv", "sp")

    # From the ledger, not from the session: a console started again shows the same.
    for sheet, batch_id in ids.items():
        header = console.ctx.ledger.batch_header(batch_id)
        assert header is not None and header.sheet == sheet
        page = maker.get(f"/batches/{batch_id}").text
        assert f'<p id="source">months.xlsx, sheet {sheet}</p>' in page
        assert f"<td>uploaded</td><td>months.xlsx, sheet {sheet}</td>" in page
    listed = re.findall(r'<a href="/batches/[0-9a-f]+">([^<]+)</a>', maker.get("/batches").text)
    assert listed == ["plain.csv", "months.xlsx, sheet February", "months.xlsx, sheet January"]


def test_a_batch_whose_only_sent_rows_another_batch_paid_reads_uploaded(console: Console) -> None:
    # Found by use: registered on the command line (no console "uploaded" action), a file with
    # one row another batch had paid and one new row read "finished with rows pending", with
    # "Reconcile now" and no Submit: its new row could not be paid from the console.
    ledger = console.ctx.ledger
    first = register_rows(ledger, "ownfirst", "own-a-2")
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("own-a-2", "p-own-a", "COMPLETED", None)
    again = register_rows(ledger, "ownagain", "own-a-2", "own-b-3")  # row 2: the same payout
    counts = ledger.batch_counts(again)
    assert counts.to_send == 1 and counts.completed == 1 and counts.own_sent == 0
    assert ledger.batch_counts(first).own_sent == 1

    page = signed_in(console, "mia").get(f"/batches/{again}").text
    assert re.search(r'id="state"[^>]*>uploaded<', page), page
    assert f'action="/batches/{again}/submit"' in page
    assert 'id="reconcile-form"' not in page


def _refund_batch(console: Console, batch_id: str) -> None:
    """A refund batch as `payflow refund` leaves it: one refund COMPLETED, one MANUAL (the
    platform refunds it by hand; its debit is held), one row rejected."""
    book = console.ctx.ledger.refunds
    orders = [f"0b8f3c2e-5a1d-4e6b-9f7a-1000000000{n}" for n in ("a1", "a2", "a3")]
    done = RefundInstruction(2, "rf-done", orders[0], Decimal("1500.00"), "RUB")
    manual = RefundInstruction(3, "rf-7777", orders[1], Decimal("250.50"), "RUB")
    rejected = RejectedRefund(4, "rf-bad", orders[2], ["amount: differs (amount_differs)"])
    book.register_batch(batch_id, "refunds.csv", [done, manual], [rejected])
    console.ctx.ledger.set_maker(batch_id, "mia")
    assert len(book.claim(batch_id, "w", 10)) == 2
    book.mark_created("rf-done", CreatedRefund("r-1", "COMPLETED"), source=EventSource.SUBMIT)
    book.mark_created("rf-7777", CreatedRefund("r-2", "MANUAL"), source=EventSource.SUBMIT)


def test_a_refund_batch_shows_its_refunds_never_an_empty_payout_batch(console: Console) -> None:
    # It read "nothing to pay", 0 rows, "0 of 0 final", with Reconcile and payout reports.
    _refund_batch(console, "refunds-1")
    maker = signed_in(console, "mia")
    listed = maker.get("/batches").text
    line = listed[listed.index("refunds-1") :].split("</tr>")[0]
    assert "refunds not final" in line and '<td class="num">3</td>' in line
    assert "1500.00 RUB refunded, 250.50 RUB not final yet" in line

    page = _text(maker.get("/batches/refunds-1").text)
    assert "Refund batch" in page and "nothing to pay" not in page
    assert "2 of 3 final" in page and re.search(r'id="state"[^>]*>refunds not final<', page)
    not_final = page.split("Not final yet")[1]
    assert "rf-7777" in not_final and "MANUAL" in not_final and "rf-done" not in not_final
    assert "/reconcile" not in page

    report = maker.get("/batches/refunds-1/report.csv")
    assert report.status_code == 200
    assert 'filename="refunds-1-refunds.csv"' in report.headers["content-disposition"]
    lines = report.text.lstrip("\ufeff").splitlines()
    assert lines[0].startswith("row,orderId,externalId,refundId")
    assert [line.split(",")[9] for line in lines[1:]] == ["COMPLETED", "MANUAL", "REJECTED"]

    # Nothing a payout batch offers acts on it: it read as reconciled with nothing checked.
    reconciled = maker.post("/batches/refunds-1/reconcile", data={"csrf": csrf_of(page)})
    assert reconciled.status_code == 409 and "is a refund batch" in reconciled.text
    assert maker.get("/batches/refunds-1/progress.json").status_code == 409


def test_a_refund_batch_over_the_limit_shows_it_waits_for_a_checker_then_who_approved(
    console: Console,
) -> None:
    # Refunds move money out: over the policy's limits a refund batch waits for a checker, and
    # its page read "refunds not final" with no word of the approval nor who gave it.
    ledger = console.ctx.ledger
    order = "0b8f3c2e-5a1d-4e6b-9f7a-1000000000b1"
    big = RefundInstruction(2, "rf-big", order, Decimal("450000.00"), "RUB")
    ledger.refunds.register_batch("refunds-big", "big-refunds.csv", [big], [])
    submit(ledger, "refunds-big", actor(ledger, "mia"))
    maker = signed_in(console, "mia")
    page = _text(maker.get("/batches/refunds-big").text)
    assert re.search(r'id="state"[^>]*>awaiting approval<', page), page
    assert "waiting for approval by 1 person, never its maker: `payflow approve refunds-big`" in (
        page
    )
    assert "mia" in page.split("History")[1] and "registered" in page.split("History")[1]
    listed = maker.get("/batches").text
    assert "awaiting approval" in listed[listed.index("refunds-big") :].split("</tr>")[0]

    decide(ledger, "refunds-big", actor(ledger, "carl"), approve=True, via="cli")
    page = _text(maker.get("/batches/refunds-big").text)
    assert "approved by carl" in page and "awaiting approval" not in page
    history = page.split("History")[1]
    assert "carl" in history and "approved" in history


def test_a_refund_batch_names_the_refunds_an_earlier_batch_made_apart_from_its_own(
    console: Console,
) -> None:
    # Found by use: a second file naming an order the first had refunded read "refunds
    # 1750.50 RUB" (its own 250.50 and the earlier 1500.00), as if it had refunded both.
    _refund_batch(console, "refunds-1")
    book = console.ctx.ledger.refunds
    order = "0b8f3c2e-5a1d-4e6b-9f7a-1000000000b1"
    first_order = "0b8f3c2e-5a1d-4e6b-9f7a-1000000000a1"  # refunds-1's COMPLETED refund
    known = RefundInstruction(2, "rf-done", first_order, Decimal("1500.00"), "RUB")
    new = RefundInstruction(3, "rf-new", order, Decimal("99.99"), "RUB")
    outcome = book.register_batch("refunds-2", "again.csv", [known, new], [])
    assert [k.external_id for k in outcome.already_known] == ["rf-done"]
    assert len(book.claim("refunds-2", "w", 10)) == 1
    book.mark_created("rf-new", CreatedRefund("r-3", "COMPLETED"), source=EventSource.SUBMIT)

    maker = signed_in(console, "mia")
    page = _text(maker.get("/batches/refunds-2").text)
    head = page.split("Found made by an earlier batch")[0]
    assert 'id="refund-figures">99.99 RUB refunded</span>' in head and "1599.99" not in page
    assert 'id="earlier-totals">1500.00 RUB</span> (1 row, not refunded again)' in head
    earlier = page.split('id="made-earlier"')[1].split("</section>")[0]
    assert "rf-done" in earlier and 'href="/batches/refunds-1"' in earlier
    assert "rf-new" not in earlier
    listed = maker.get("/batches").text
    line = listed[listed.index("refunds-2") :].split("</tr>")[0]
    assert "99.99 RUB refunded (and 1500.00 RUB made by an earlier batch)" in line
    # The first batch's own page and line are unchanged: the refund is its own there.
    first = maker.get("/batches/refunds-1").text
    assert 'id="refund-figures">1500.00 RUB refunded, 250.50 RUB not final yet<' in first
    assert "made-earlier" not in first


def test_a_failed_refund_is_never_counted_as_refunded(console: Console) -> None:
    # Found by use: a batch whose 3200.00 RUB refund ended FAILED read "refunds made by this
    # batch 4950.50 RUB" on its page and in the list, where 1750.50 RUB had been refunded.
    book = console.ctx.ledger.refunds
    orders = [f"0b8f3c2e-5a1d-4e6b-9f7a-1000000000c{n}" for n in range(1, 4)]
    rows = [
        RefundInstruction(2, "rf-c1", orders[0], Decimal("1500.00"), "RUB"),
        RefundInstruction(3, "rf-c2", orders[1], Decimal("250.50"), "RUB"),
        RefundInstruction(4, "rf-c1111", orders[2], Decimal("3200.00"), "RUB"),
    ]
    book.register_batch("refunds-f", "march-refunds.csv", rows, [])
    assert len(book.claim("refunds-f", "w", 10)) == 3
    for n, row in enumerate(rows):
        book.mark_created(
            row.external_id, CreatedRefund(f"r-f{n}", "PENDING"), source=EventSource.SUBMIT
        )
    for ext, status in (("rf-c1", "COMPLETED"), ("rf-c2", "COMPLETED"), ("rf-c1111", "FAILED")):
        book.record_status(external_id=ext, status=status, source=EventSource.POLL)

    maker = signed_in(console, "mia")
    page = maker.get("/batches/refunds-f").text
    assert 'id="refund-figures">1750.50 RUB refunded</span>' in page, page
    assert "4950.50" not in page
    listed = maker.get("/batches").text
    line = listed[listed.index("refunds-f") :].split("</tr>")[0]
    assert "finished with rows not refunded" in line
    assert "1750.50 RUB refunded" in line and "4950.50" not in line


def test_every_page_says_no_real_money_moves_on_the_embedded_sandbox(
    console: Console, tmp_path: Path
) -> None:
    # Found by use: the terminal said "no real money moved" once at start-up, and no page of
    # the console did: an operator approving 600000.00 RUB could not tell a rehearsal from a
    # payment.
    note = 'id="sandbox-note"'
    with httpx.Client(base_url=console.url) as anonymous:
        assert note in anonymous.get("/login").text
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "sandbox.csv", "sb")
    for path in ("/batches", "/upload", f"/upload/{batch_id}", f"/batches/{batch_id}"):
        page = maker.get(path).text
        assert "Embedded sandbox: no real money moves" in page, path
    assert note in signed_in(console, "carl").get(f"/batches/{batch_id}/approve").text
    # A console paying a real API says nothing of the kind.
    real = start_console(tmp_path / "real", console.ctx.target.api_url, sandbox=False)
    try:
        assert note not in signed_in(real, "mia").get("/batches").text
    finally:
        real.server.stop()
        real.ctx.ledger.close()


def test_the_approve_page_of_a_rerun_never_says_its_rows_were_sent_before_they_are(
    console: Console,
) -> None:
    # Found by use: a rerun waiting for its checker said of each row "mar-004 ended FAILED;
    # sent again as mar-004-r1": read as already sent, before anything was.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "resend.csv", "rs")
    pay_with_the_engine(console, batch_id)
    page = maker.get(f"/batches/{batch_id}").text
    form = {"csrf": csrf_of(page), "row": ["4"], "reasons_read": "yes"}
    started = maker.post(f"/batches/{batch_id}/rerun", data=form)
    rerun_id = started.headers["location"].rsplit("/", 1)[-1]
    assert console.ctx.ledger.batch_counts(rerun_id).to_send == 1

    approve = signed_in(console, "carl").get(f"/batches/{rerun_id}/approve").text
    earlier = _text(approve.split('id="earlier"')[1].split("</div>")[0])
    assert "sent again" not in approve.split('id="earlier"')[0].split("<h2>")[-1]
    assert "sent again" not in earlier
    assert "rs-c-bad-1</span> ended FAILED; this rerun's attempt is" in earlier


def test_the_upload_names_rows_already_final_only_when_there_are_some(console: Console) -> None:
    # Found by use: a new file with one rejected row read "12 rows: 11 to pay, 1 rejected,
    # 0 already final": rejected rows count as final in the ledger, so the clause showed.
    maker = signed_in(console, "mia")
    rows = [(f"af-{ext}", *rest) for ext, *rest in CLEAN_ROWS] + ERROR_ROWS[:1]
    token = csrf_of(maker.get("/upload").text)
    posted = maker.post(
        "/upload", files={"file": ("af.csv", batch_csv(rows))}, data={"csrf": token}
    )
    page = maker.get(posted.headers["location"]).text
    assert "<strong>1</strong> rejected." in page and "already final" not in page
    batch_id = posted.headers["location"].rsplit("/", 1)[-1]
    pay_with_the_engine(console, batch_id)
    # The same file again: its 5 payouts are final, and the page says so.
    posted = maker.post(
        "/upload", files={"file": ("af.csv", batch_csv(rows))}, data={"csrf": token}
    )
    again = maker.get(posted.headers["location"]).text
    assert "<strong>1</strong> rejected, 5 already final." in again


def test_a_rerun_page_is_named_apart_from_its_batch(console: Console) -> None:
    # Found by use: the rerun's page was headed "Batch 3f2e69162806…", word for word its
    # batch's heading (both ids start alike), so the two pages read as one batch.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "named.csv", "nm")
    pay_with_the_engine(console, batch_id)
    page = maker.get(f"/batches/{batch_id}").text
    form = {"csrf": csrf_of(page), "row": ["4"], "reasons_read": "yes"}
    rerun_id = maker.post(f"/batches/{batch_id}/rerun", data=form).headers["location"]
    rerun_id = rerun_id.rsplit("/", 1)[-1]
    own_end = rerun_id.rpartition("-rerun-")[2]

    def heading(batch: str) -> str:
        found = re.search(r"<h1[^>]*>([^<]*)</h1>", maker.get(f"/batches/{batch}").text)
        assert found
        return found.group(1)

    assert heading(batch_id) == f"Batch {batch_id[:12]}…"
    assert heading(rerun_id) == f"Rerun …-rerun-{own_end}"


def test_a_file_uploaded_again_after_it_was_paid_is_not_said_to_await_approval(
    console: Console,
) -> None:
    # Found by use: the March file uploaded again once paid read "Submitted for approval:
    # follow it on its page", of a batch finished long before.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "again.csv", "ag")
    page = maker.get(f"/upload/{batch_id}").text
    assert maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)}).is_redirect
    note = re.compile(r'id="submitted-note">([^:]*):')
    assert note.findall(maker.get(f"/upload/{batch_id}").text) == ["Submitted for approval"]
    # What carl's "Approve and pay" leaves, the run paid by the engine itself.
    record_decision(
        console.ctx.ledger, batch_id, approver="carl", decision="approve", via="console"
    )
    record_action(console.ctx.ledger, "carl", "approved", batch_id)
    record_action(console.ctx.ledger, "carl", "pay_started", batch_id, detail="in the console")
    pay_with_the_engine(console, batch_id)
    rows = [(f"ag-{ext}", *rest) for ext, *rest in CLEAN_ROWS]
    token = csrf_of(page)
    posted = maker.post(
        "/upload", files={"file": ("again.csv", batch_csv(rows))}, data={"csrf": token}
    )
    again = maker.get(posted.headers["location"]).text
    assert note.findall(again) == [
        "Submitted before; the batch is now <strong>finished with failures</strong>"
    ]
    # A one-row rerun's approve page read "1 payouts".
    form = {"csrf": token, "row": ["4"], "reasons_read": "yes"}
    rerun_id = maker.post(f"/batches/{batch_id}/rerun", data=form).headers["location"]
    approve = signed_in(console, "carl").get(rerun_id + "/approve").text
    assert "<p>1 payout, a rerun of batch" in approve


def test_a_rerun_is_said_to_be_made_from_failed_rows_not_uploaded(console: Console) -> None:
    # Found by use: a rerun's history read "mia uploaded", though no file was uploaded.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "rerun-history.csv", "rh")
    pay_with_the_engine(console, batch_id)
    page = maker.get(f"/batches/{batch_id}").text
    form = {"csrf": csrf_of(page), "row": ["4"], "reasons_read": "yes"}
    started = maker.post(f"/batches/{batch_id}/rerun", data=form)
    assert started.status_code == 303, started.text
    rerun = maker.get(started.headers["location"]).text
    history = rerun.split('id="history"')[1].split("</table>")[0]
    cells = [re.findall(r"<td>(.*?)</td>", line) for line in history.split("<tr>")[2:]]
    assert cells[0][1:] == [
        "mia",
        "created from failed rows",
        f"rerun of {batch_id}: row 4",
    ]
    assert "uploaded" not in history


def _pay_rows(console: Console, batch_id: str, endings: list[str]) -> list[str]:
    """XOF SIM rows whose requisites end so (the sandbox's outcome), registered and paid."""
    rows = [
        PayoutInstruction(
            row_number=n,
            external_id=f"{batch_id}-{n}",
            amount=Decimal(1000 + 5 * n),
            currency="XOF",
            payment_type="SIM",
            requisites=f"225079{n:03d}{ending}",
            name="Awa Kone",
            user_id=f"u-{n}",
        )
        for n, ending in enumerate(endings, start=2)
    ]
    console.ctx.ledger.register_batch(batch_id, "cli.csv", rows, [])
    pay_with_the_engine(console, batch_id)
    return [row.external_id for row in rows]


def test_each_failed_row_is_named_by_its_external_id_and_amount(console: Console) -> None:
    # Found by use: the failed groups named "row 3" only; the operator looked each row up.
    ids = _pay_rows(console, "failnames", ["0001", "2222", "2222"])
    page = signed_in(console, "mia").get("/batches/failnames").text
    failed = page.split('id="failed"')[1].split("</section>")[0]
    chips = [
        re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r'class="chip">(.*?)</label>', failed)
    ]
    assert chips == [f"row 3 · {ids[1]} · 1015 XOF", f"row 4 · {ids[2]} · 1020 XOF"]


def test_the_refund_page_names_each_row_not_refunded_and_why(console: Console) -> None:
    # Found by use: the page counted rows per status; which refund failed, and why a row was
    # refused, only `payflow refund` said.
    _refund_batch(console, "refunds-w")
    book = console.ctx.ledger.refunds
    order = "0b8f3c2e-5a1d-4e6b-9f7a-1000000000d1"
    row = RefundInstruction(2, "rf-d1111", order, Decimal("320.00"), "RUB")
    book.register_batch("refunds-why", "why.csv", [row], [])
    assert len(book.claim("refunds-why", "w", 10)) == 1
    book.mark_created("rf-d1111", CreatedRefund("r-d", "PENDING"), source=EventSource.SUBMIT)
    book.record_status(external_id="rf-d1111", status="FAILED", source=EventSource.POLL)
    maker = signed_in(console, "mia")
    for batch_id, expected in (
        ("refunds-w", [["4", "rf-bad", "REJECTED", "amount: differs (amount_differs)"]]),
        ("refunds-why", [["2", "rf-d1111", "FAILED", NO_REFUND_REASON]]),
    ):
        page = _text(maker.get(f"/batches/{batch_id}").text)
        listed = page.split('id="not-refunded"')[1].split("</section>")[0]
        cells = [re.findall(r"<td[^>]*>(.*?)</td>", line) for line in listed.split("<tr>")[2:]]
        assert [[c[0], c[1], c[3], c[4]] for c in cells] == expected


def test_the_chart_colours_canceled_and_expired_as_unpaid(console: Console) -> None:
    # Found by use: CANCELED was drawn blue, as neutral as a pending row, beside a red FAILED.
    _pay_rows(console, "colours", ["0001", "2222", "3333", "4444"])
    page = signed_in(console, "mia").get("/batches/colours").text
    bars = dict(re.findall(r'class="bar o-([a-z_]+)( unpaid)?"', page))
    assert bars == {"paid": "", "failed": " unpaid", "canceled": " unpaid", "expired": " unpaid"}


def _downloads(page: str) -> str:
    """The batch page's line of reports, its tags stripped."""
    line = page.split('id="reports"')[1].split("</p>")[0]
    text = html.unescape(re.sub(r"<[^>]+>", "", line.split(">", 1)[1]))
    return re.sub(r"\s+", " ", text).strip()


def test_a_batch_offers_its_reconciliation_report_only_once_a_row_was_sent(
    console: Console,
) -> None:
    # Found by use: "Reports: CSV · XLSX" stood on a batch awaiting approval and on one whose
    # every row was rejected; the report listed the file's rows as "not sent yet".
    maker = signed_in(console, "mia")
    waiting = upload_clean(maker, "waiting.csv", "w")
    page = maker.get(f"/batches/{waiting}").text
    assert maker.post(f"/batches/{waiting}/submit", data={"csrf": csrf_of(page)}).is_redirect
    page = maker.get(f"/batches/{waiting}").text
    assert f"/batches/{waiting}/report." not in page
    assert _downloads(page) == (
        "No reconciliation report: it comes once a row of this batch is sent (none is yet): "
        "it then holds each row's payout, status and statusMessage."
    )

    token = csrf_of(maker.get("/upload").text)
    posted = maker.post(
        "/upload",
        files={"file": ("all-rejected.csv", batch_csv(ERROR_ROWS[:3]))},
        data={"csrf": token},
    )
    rejected = posted.headers["location"].rsplit("/", 1)[-1]
    page = maker.get(f"/batches/{rejected}").text
    assert f"/batches/{rejected}/report." not in page
    assert f'href="/batches/{rejected}/rejects.xlsx"' in page
    assert _downloads(page) == (
        "Rejects report: CSV · XLSX. No reconciliation report: every row was rejected, so "
        "nothing is to be paid: the rejects report says why."
    )
    assert maker.get(f"/batches/{rejected}/rejects.csv").status_code == 200

    ledger = console.ctx.ledger
    declined = register_rows(ledger, "nodeclined", "no-declined-2")
    record_decision(ledger, declined, approver="carl", decision="decline", note="wrong month")
    page = maker.get(f"/batches/{declined}").text
    assert _downloads(page) == (
        "No reconciliation report: the batch was declined and nothing of it was sent."
    )

    paid = register_rows(ledger, "nopaid", "no-paid-2")
    ledger.claim_for_submit(paid, "w", 10)
    ledger.mark_created("no-paid-2", "p-2", "COMPLETED", None)
    page = maker.get(f"/batches/{paid}").text
    assert _downloads(page) == "Reports: CSV · XLSX"


def _amounts(page: str) -> dict[str, list[str]]:
    """The batch page's amounts table: per currency, its paid, failed and pending cells."""
    table = page.split('id="amounts-table"')[1].split("</table>")[0]
    found = {}
    for line in table.split("<tr data-currency=")[1:]:
        cells = [
            re.sub(r"\s+", " ", re.sub(r"<br>", " · ", re.sub(r"<(?!br)[^>]+>", "", cell)))
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", line)
        ]
        found[cells[0]] = cells[1:]
    return found


def test_the_batch_page_shows_the_amounts_paid_failed_and_pending_by_latest_attempt(
    console: Console,
) -> None:
    # Found by use: the page counted rows per state and no money: what the batch paid, and what
    # failed, was read from the report's summary sheet.
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "amounts.csv", "am")
    page = maker.get(f"/batches/{batch_id}").text
    assert 'id="amounts"' not in page  # nothing sent: nothing paid, failed or pending
    pay_with_the_engine(console, batch_id)
    page = maker.get(f"/batches/{batch_id}").text
    assert _amounts(page) == {
        # KES is paid in whole units: shown without .00 (issue 36).
        "KES": ["4000 · 2 rows", "2700 · 3 rows", "0 · 0 rows"],
    }

    # Rows 4 (700 KES) and 5 (900 KES) sent again: one paid, one still at the service. The
    # page counts them by their rerun's attempt, as the report does.
    for row, status in (("4", "COMPLETED"), ("5", "PROCESSING")):
        form = {"csrf": csrf_of(page), "row": [row], "reasons_read": "yes"}
        started = maker.post(f"/batches/{batch_id}/rerun", data=form)
        rerun_id = started.headers["location"].split("?")[0].rsplit("/", 1)[-1]
        [claimed] = console.ctx.ledger.claim_for_submit(rerun_id, "w", 10)
        console.ctx.ledger.mark_created(claimed.instruction.external_id, f"p-{row}", status)
    page = maker.get(f"/batches/{batch_id}").text
    assert _amounts(page) == {
        "KES": ["4700 · 3 rows", "1100 · 1 row", "900 · 1 row"],
    }


def test_a_conflict_row_is_named_with_its_columns_and_its_warnings_are_not_an_approvers(
    console: Console,
) -> None:
    # Found by hand: the pages said "1 row with a known externalId and other content" without
    # naming the row or the column, and an approver was warned of an outlier on that row,
    # which is never sent.
    ledger = console.ctx.ledger
    register_rows(ledger, "conflict-first", "conf-2")
    [earlier] = [r for r in ledger.batch_rows("conflict-first")]
    changed = PayoutInstruction(
        2, "conf-2", Decimal(999999), "XOF", "SIM", earlier.requisites or "", "Awa Kone", "u-2"
    )
    outlier = IntakeWarning(2, "conf-2", "amount", "amount_outlier", "far above the others")
    ledger.register_batch("conflict-later", "later.csv", [changed], [], warnings=[outlier])
    assert ledger.intake_warnings("conflict-later") == []

    page = _text(signed_in(console, "carl").get("/batches/conflict-later").text)
    assert "Known externalId, other content" in page
    assert "conf-2" in page and "conflict-first" in page and "amount" in page


def test_a_batch_whose_approval_expired_reads_so_in_the_list_not_uploaded(
    console: Console, tmp_path: Path
) -> None:
    # A batch nobody approved in time read "uploaded" here and "3 VALIDATED" in `payflow
    # status`, as if it could still be paid; `payflow pay` refuses it.
    from support.beats import at_past
    from support.operators import set_ledger_policy

    set_ledger_policy(
        console.ctx.ledger,
        'currencies:\n  "*":\n    bands:\n      - {steps: 1}\n    expiry_hours: 1\n',
    )
    batch_id = register_rows(at_past(console.ctx.ledger, 7200), "cliexpired", "cli-exp-2")
    checker = signed_in(console, "carl")
    listed = checker.get("/batches").text
    assert re.search(
        rf'{batch_id}</small></td>\s*<td><span class="state s-approval-expired">', listed
    )
    page = checker.get(f"/batches/{batch_id}").text
    assert re.search(r'id="state"[^>]*>approval expired<', page)
