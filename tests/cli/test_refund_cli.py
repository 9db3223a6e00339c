"""`payflow refund` end to end in a subprocess on the sample file and the embedded sandbox."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from cli_support import (
    NOISE,
    killed_at_the_end,
    payflow_env,
    run_payflow,
    start_in_a_terminal,
    start_payflow,
)
from openpyxl import load_workbook
from paid_here import refunded_here
from support.operators import ledger_url_of
from support.stats import sandbox_stats

from payflow.ledger import Ledger
from payflow.settings import SANDBOX_TOKEN_DEFAULT

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "refunds_sample.csv"


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("prefect-home")


def test_the_sample_refunds_on_the_embedded_sandbox_and_a_second_run_refunds_nothing(
    tmp_path, prefect_home
):
    env = {**payflow_env(tmp_path / "home", prefect_home), "PAYFLOW_USER": "rita"}
    done = run_payflow(["refund", str(SAMPLE), "--yes", "--json"], env, tmp_path)
    assert done.returncode == 1, done.stderr  # the sample has rejected and failed rows
    summary = json.loads(done.stdout)
    assert summary["statuses"] == {
        "COMPLETED": 3,
        "FAILED": 1,
        "SUBMIT_REJECTED": 1,
        "REJECTED": 2,
    }
    for noise in NOISE:
        assert noise not in done.stderr, f"{noise!r} reached the operator:\n{done.stderr}"
    report = Path(summary["report"]).with_suffix(".csv").read_text(encoding="utf-8-sig")
    assert "order_not_completed" in report and "amount_differs" in report
    # Amounts with the currency's decimals ("1500" beside "250.50" before), numbers in the XLSX.
    assert ",1500.00,RUB,1500.00,RUB," in report and ",250.50,RUB," in report
    rows = load_workbook(summary["report"], read_only=True)["Rows"]
    amounts = [(c.value, c.number_format) for c in next(rows.iter_rows(min_row=2, max_row=2))[4:5]]
    assert amounts == [(1500, "#,##0.00")]
    log = (tmp_path / "home" / "logs" / "payflow.log").read_text(encoding="utf-8")
    assert SANDBOX_TOKEN_DEFAULT not in log + done.stderr + report

    # As an operator reads it: the same figures, and each row not refunded with its reasons.
    again = run_payflow(["refund", str(SAMPLE), "--yes"], env, tmp_path)
    lines = again.stdout.splitlines()
    assert "  5 rows in the ledger from an earlier run: none is refunded twice" in lines
    for state, count in summary["statuses"].items():
        assert f"  {state:<16} {count}" in lines
    refused = [line for line in lines if line.startswith("  rejected row ")]
    assert len(refused) == 2, again.stdout
    assert any(line.endswith("(order_not_completed)") for line in refused)
    assert any(line.endswith("(amount_differs)") for line in refused)
    # Sent and not refunded: the service's refusal in its words, a failure without a reason.
    assert (
        "  failed row 5: rf-sample-1111: the service gives no reason (statusMessage is always null)"
        in lines
    )
    assert any(
        line.startswith("  submit_rejected row 6: rf-sample-0005: create_refund: HTTP 403: ")
        for line in lines
    )

    # `payflow status` of a refund batch said "batch ID" and nothing else, exit 0.
    status = run_payflow(["status", summary["batch_id"]], env, tmp_path)
    assert status.returncode == 1
    assert status.stdout.splitlines()[0] == f"refund batch {summary['batch_id']}"
    assert "  COMPLETED        3" in status.stdout.splitlines()
    # It listed only refunds not final: the failed one read "FAILED 1" with no row, no why and
    # no way to refund its order again, which the run had said.
    shown = status.stdout.splitlines()
    told = [x for x in lines if x.startswith(("  rejected row ", "  failed row ", "  submit_"))]
    assert len(told) == 4, again.stdout
    assert shown[shown.index("not refunded:") + 1 :][: len(told)] == told
    retry = (
        "  a failed or canceled refund is never sent again by itself: to refund its order "
        "again, give the row a new externalId in the file and run `payflow refund FILE`"
    )
    assert retry in shown and retry in lines
    listing = run_payflow(["status"], env, tmp_path)
    # Its maker, as a payout batch's: the listing named nobody, since no refund run recorded one.
    assert (
        "refunds_sample.csv by rita  7 rows (refunds): 3 COMPLETED, 1 FAILED, "
        "2 rejected in the file, 1 refused by the service" in listing.stdout
    )
    listed = json.loads(run_payflow(["status", "--json"], env, tmp_path).stdout)["batches"]
    assert [(b["kind"], b["made_by"]) for b in listed] == [("refunds", "rita")]


def test_a_russian_excel_file_says_its_amounts_were_read_so_as_a_payout_file_does(
    tmp_path, prefect_home
):
    # `1 500,00` in a `;` file was refunded as 1500.00 with no word, while a payout run of the
    # same Excel's file says how its amounts were read.
    env = payflow_env(tmp_path / "home", prefect_home)
    path = tmp_path / "russian.csv"
    path.write_text("orderId;amount\n0b8f3c2e-5a1d-4e6b-9f7a-100000000001;1 500,00\n", "utf-8")
    done = run_payflow(["refund", str(path), "--yes"], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[1] == (
        "  warning: 1 amount(s) were read in the Russian Excel form of a ;-separated file: "
        "decimal comma and space thousands separators (1 500,50 read as 1500.50)"
    ), done.stdout
    assert "  COMPLETED        1" in lines


def test_without_yes_and_without_a_terminal_nothing_is_refunded(tmp_path, prefect_home):
    env = payflow_env(tmp_path / "home", prefect_home)
    done = run_payflow(["refund", str(SAMPLE)], env, tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("run again with --yes to refund without a prompt")


def test_the_question_in_a_terminal_says_how_many_rows_and_what_is_checked(tmp_path, prefect_home):
    # It asked "Refund every valid order of i1.csv?" with no figure at all.
    env = payflow_env(tmp_path / "home", prefect_home)
    process, leader = start_in_a_terminal(["refund", str(SAMPLE)], env, tmp_path, output_too=True)
    seen = b""
    while b"[y/N]" not in seen:
        seen += os.read(leader, 4096)
    os.write(leader, b"n\n")
    assert process.wait(timeout=60) == 1
    os.close(leader)
    assert b"Refund every valid order of refunds_sample.csv (7 rows; each order is checked" in seen
    assert not (tmp_path / "home" / "reports").exists()


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_at_the_question_stops_in_one_line_and_sends_nothing(
    tmp_path, prefect_home, stop, code
):
    # Ctrl-C at the question read as "no answer; nothing was done", exit 1, and SIGTERM killed
    # the command without a word; `payflow run`'s question stops with the resume line.
    env = payflow_env(tmp_path / "home", prefect_home)
    process, leader = start_in_a_terminal(["refund", str(SAMPLE)], env, tmp_path, output_too=True)
    seen = b""
    try:
        while b"[y/N]" not in seen:
            seen += os.read(leader, 4096)
        # As late as a person's key: a signal between the prompt and the read that follows it
        # is handled only once the read returns (CPython's race, not the command's).
        time.sleep(0.5)
        process.send_signal(stop)
        assert process.wait(timeout=60) == code, seen.decode()
        while True:  # the rest of the output, until the terminal closes
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    last = seen.decode().strip().splitlines()[-1]
    assert last == (
        f"payflow: stopped on {stop.name} before refunding; nothing was sent. "
        f"Resume with: payflow refund {SAMPLE} --yes"
    )
    assert not (tmp_path / "home" / "reports").exists()


def test_sigterm_stops_sending_refunds_says_how_to_resume_and_the_run_again_refunds_each_once(
    tmp_path, prefect_home, make_sandbox
):
    # `payflow refund` killed by SIGTERM died mid-request with exit 143 and not a word: no line
    # saying what was sent or how to go on (a run again resolved the rows, but nobody was told).
    sandbox = make_sandbox(latency=0.3)
    body = {"count": 60, "amount": "100.00", "currency": "RUB"}
    made = httpx.post(f"{sandbox.url}/_sandbox/orders/bulk", json=body, timeout=30)
    orders = made.json()["ids"]
    lines = [f"{order},rf-sig-{n},100.00,Signal test," for n, order in enumerate(orders)]
    refunds = tmp_path / "refunds.csv"
    refunds.write_text("orderId,externalId,amount,reason,callbackUrl\n" + "\n".join(lines) + "\n")
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_MAX_IN_FLIGHT="2",
    )
    with killed_at_the_end(
        start_payflow(["refund", str(refunds), "--yes"], env, tmp_path)
    ) as process:
        deadline = time.monotonic() + 180
        while len(sandbox_stats(sandbox.url)["refunds"]) < 4:
            assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the run never sent 4 refunds"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    sent = len(sandbox_stats(sandbox.url)["refunds"])
    assert process.returncode == 143, err.decode()
    assert "payflow: stopped on SIGTERM: nothing more is sent" in err.decode()
    assert f"Resume with: payflow refund {refunds} --yes" in err.decode()
    assert sent < len(orders)  # it stopped: what was in flight settled, nothing more went

    # Resumed with more in flight: at two, the rest took most of the test's time.
    resumed = {**env, "PAYFLOW_MAX_IN_FLIGHT": "16"}
    again = run_payflow(["refund", str(refunds), "--yes", "--json"], resumed, tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["statuses"] == {"COMPLETED": len(orders)}
    assert sandbox_stats(sandbox.url)["refundsByOrderId"] == dict.fromkeys(orders, 1)


def test_a_refund_left_pending_on_a_past_embedded_sandbox_is_not_followed_on_a_new_one(
    tmp_path, prefect_home
):
    # Run again, a refund file whose 5555 refund a past run left PENDING was followed to the
    # deadline (15 minutes by default) on a new embedded sandbox that never heard of it, and
    # ended "not final at the deadline"; a payout batch is refused in one line (past_sandbox).
    refunds = tmp_path / "pending-refunds.csv"
    refunds.write_text(
        "orderId,externalId\n"
        "0b8f3c2e-5a1d-4e6b-9f7a-100000000001,gone-rf-1\n"
        "0b8f3c2e-5a1d-4e6b-9f7a-100000000002,gone-rf-5555\n",
        encoding="utf-8",
    )
    env = payflow_env(tmp_path / "home", prefect_home, PAYFLOW_TRACK_DEADLINE="2")
    batch_id = refunded_here(refunds, env, deadline=2)  # its embedded sandbox ends with it
    with Ledger.open(ledger_url_of(env)) as ledger:
        assert ledger.refunds.summary(batch_id) == {"COMPLETED": 1, "PENDING": 1}

    again = run_payflow(["refund", str(refunds), "--yes", "--json"], env, tmp_path)
    assert again.returncode == 2, again.stdout + again.stderr
    assert again.stdout == ""
    assert again.stderr.strip().splitlines() == [
        f"payflow: refund batch {batch_id}: 1 refund went to a past run's embedded "
        "sandbox, which ended with that run, so nothing can follow it now; nothing was sent. "
        "To try the file again on the sandbox, use a fresh ledger (another PAYFLOW_HOME)"
    ]
    # `payflow status` said `payflow refund FILE` again would follow it.
    status = run_payflow(["status", batch_id], env, tmp_path)
    assert status.returncode == 1
    assert "again follows them" not in status.stdout
    *_, heading, _refund, closing = status.stdout.splitlines()
    assert heading == (
        "not final yet (1): 1 refund went to a past run's embedded sandbox, which ended with "
        "that run, so nothing can follow it; to try the file again on the sandbox, use a fresh "
        "ledger (another PAYFLOW_HOME)"
    )
    assert closing == "sandbox: no real money moved"
