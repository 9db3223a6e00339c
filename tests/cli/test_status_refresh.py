"""`payflow status` asks the API about rows that are not final (issue 7, item 16): with
`--refresh`, and by default once the batch's last change in the ledger is over a minute old."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from cli_support import payflow_env, run_payflow, sim_instruction
from sqlalchemy import create_engine, text
from support.operators import set_ledger_policy
from support.servers import free_port
from support.stats import sandbox_stats

from payflow.api import AsyncPayoutsClient
from payflow.approvals import record_decision
from payflow.ending import NEW_EXTERNAL_IDS
from payflow.ledger import Detected, FindingKind, Ledger
from payflow.ledger.records import RejectedRow
from payflow.ledger.run_beats import beat
from payflow.links.records import LinkRow
from payflow.links.store import LinkStore
from payflow.paying import submit_batch
from payflow.refunds.steps import prepare_refunds
from payflow.refunds.submit import submit_refunds
from payflow.wording import NOT_REFRESHED


async def _submitted(ledger: Ledger, sandbox, batch: str, rows: int) -> None:
    ledger.register_batch(
        batch, f"{batch}.csv", [sim_instruction(batch, n) for n in range(1, rows + 1)], []
    )
    async with AsyncPayoutsClient(sandbox.token, base_url=sandbox.url, timeout=5) as client:
        await submit_batch(client, ledger, batch, worker_id="w1", chunk_size=50, callback_url=None)


def _wait_until_completed_at_the_service(url: str, count: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        payouts = sandbox_stats(url)["payouts"]
        if sum(1 for p in payouts if p["status"] == "COMPLETED") == count:  # type: ignore[union-attr]
            return
        assert time.monotonic() < deadline, "the sandbox never completed the payouts"
        time.sleep(0.1)


def _status(env, tmp_path: Path, batch: str, *flags: str) -> tuple[int, dict[str, object]]:
    done = run_payflow(["status", batch, "--json", *flags], env, tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _age(ledger_url: str, batch: str, by: timedelta) -> None:
    """Pretend the batch's last change happened `by` ago (the ledger stores naive UTC)."""
    then = (datetime.now(UTC) - by).replace(tzinfo=None)
    engine = create_engine(ledger_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text("UPDATE payouts SET updated_at = :then WHERE batch_id = :batch"),
                {"then": then, "batch": batch},
            )
            connection.execute(
                text("UPDATE batches SET created_at = :then WHERE batch_id = :batch"),
                {"then": then, "batch": batch},
            )
    finally:
        engine.dispose()


async def test_payouts_completed_after_the_run_stopped_tracking_show_completed(
    tmp_path, make_sandbox
):
    # No webhooks (no callbackUrl) and nobody polling: the ledger keeps CREATED.
    sandbox = make_sandbox(processing_delay=0.05, final_delay=0.3)
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    with Ledger.open(ledger_url) as ledger:
        await _submitted(ledger, sandbox, "asked", 3)
        await _submitted(ledger, sandbox, "stale", 2)
    _wait_until_completed_at_the_service(sandbox.url, 5)
    env = payflow_env(
        home, tmp_path / "prefect", PAYFLOW_API_URL=sandbox.url, PAYFLOW_API_TOKEN=sandbox.token
    )

    code, shown = _status(env, tmp_path, "asked", "--no-refresh")
    assert (code, shown["statuses"]) == (1, {"CREATED": 3})
    code, shown = _status(env, tmp_path, "asked")  # changed seconds ago: no refresh by default
    assert (code, shown["statuses"]) == (1, {"CREATED": 3})

    code, shown = _status(env, tmp_path, "asked", "--refresh")
    expected = {"batch_id": "asked", "statuses": {"COMPLETED": 3}, "pending": [], "sandbox": False}
    assert (code, shown) == (0, expected)

    _age(ledger_url, "stale", timedelta(minutes=2))
    code, shown = _status(env, tmp_path, "stale")  # over a minute old: refreshed by default
    assert (code, shown["statuses"]) == (0, {"COMPLETED": 2})
    with Ledger.open(ledger_url) as ledger:
        sources = {e.source for e in ledger.status_events("stale-1")}
    assert "poll" in sources


def test_refresh_without_an_api_url_says_why(tmp_path):
    home = tmp_path / "home"
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("b", "b.csv", [sim_instruction("b", 1)], [])
    env = payflow_env(home, tmp_path / "prefect")
    done = run_payflow(["status", "b", "--refresh"], env, tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "payflow: configuration: --refresh needs PAYFLOW_API_URL: "
        "a past run's embedded sandbox is gone"
    )


def test_refresh_with_a_refused_token_or_no_api_says_so_instead_of_stale_counts(
    tmp_path, make_sandbox
):
    # The polls only logged "AuthError": stale counts were shown as fresh, exit 1.
    sandbox = make_sandbox()
    home = tmp_path / "home"
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("b", "b.csv", [sim_instruction("b", 1)], [])
        ledger.claim_for_submit("b", "w", 10)
        ledger.mark_created("b-1", "p-1", "CREATED", None)
    wrong = payflow_env(
        home, tmp_path / "prefect", PAYFLOW_API_URL=sandbox.url, PAYFLOW_API_TOKEN="wrong"
    )
    done = run_payflow(["status", "b", "--refresh"], wrong, tmp_path)
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "payflow: the payments API refused the token (check PAYFLOW_API_TOKEN)",
    )
    closed = payflow_env(
        home,
        tmp_path / "prefect",
        PAYFLOW_API_URL=f"http://127.0.0.1:{free_port()}",
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_REQUEST_TIMEOUT="2",
    )
    done = run_payflow(["status", "b", "--refresh"], closed, tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("payflow: the payments API could not be asked"), done.stderr


def test_status_without_a_batch_lists_the_newest_batches_from_the_ledger(tmp_path):
    home = tmp_path / "home"
    env = payflow_env(home, tmp_path / "prefect")
    empty = run_payflow(["status"], env, tmp_path)
    assert (empty.returncode, empty.stderr) == (0, "")
    assert empty.stdout.startswith(f"no payout batch in the ledger at {home} yet")
    # Links batches are not payout batches, but an operator who made one is told where it is.
    store = LinkStore.open(f"sqlite:///{home / 'ledger.sqlite3'}")
    store.register("gifts", "gifts.csv", [LinkRow(2, "gift-1", "anna", Decimal("10"))])
    store.close()
    with_links = run_payflow(["status"], env, tmp_path)
    # It said "it holds 1 links batch" and gave no id to look at; beside payout batches it
    # named none.
    shown = with_links.stdout.splitlines()
    assert shown[1] == "links batches, newest first:"
    assert shown[2].startswith("  gifts  ") and shown[2].endswith(
        "gifts.csv  1 row: 1 no payout yet"
    )
    assert shown[3].startswith("`payflow links report BATCH_ID` shows one links batch")
    # A ledger elsewhere is named by its setting, not by a home it is not in (nor by its URL).
    other = {**env, "PAYFLOW_LEDGER_URL": f"sqlite:///{tmp_path / 'other.sqlite3'}"}
    elsewhere = run_payflow(["status", "nope"], other, tmp_path)
    assert elsewhere.stderr == "payflow: no batch 'nope' in the ledger at PAYFLOW_LEDGER_URL\n"

    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        for n, name in enumerate(("jan", "feb", "mar")):
            rows = [sim_instruction(name, 1), sim_instruction(name, 2)][: n + 1]
            ledger.register_batch(name, f"{name}.csv", rows, [])
        # Two sheets of one workbook are two batches: the file name alone read the same for both.
        ledger.register_batch("q1", "year.xlsx", [sim_instruction("q1", 1)], [], sheet="Q1")
    _age(f"sqlite:///{home / 'ledger.sqlite3'}", "q1", timedelta(days=3))
    _age(f"sqlite:///{home / 'ledger.sqlite3'}", "jan", timedelta(days=2))
    _age(f"sqlite:///{home / 'ledger.sqlite3'}", "feb", timedelta(days=1))

    listed = run_payflow(["status"], env, tmp_path)
    lines = listed.stdout.splitlines()
    assert listed.returncode == 0, listed.stderr
    # Newest first, each with its file and its rows per state as the ledger holds them.
    assert [line.split()[0] for line in lines[1:4]] == ["mar", "feb", "jan"]
    assert lines[1].endswith("mar.csv  2 rows: 2 not sent yet")
    assert lines[3].endswith("jan.csv  1 row: 1 not sent yet")
    assert lines[4].endswith("year.xlsx, sheet Q1  1 row: 1 not sent yet")

    as_json = json.loads(run_payflow(["status", "--json"], env, tmp_path).stdout)
    assert as_json["total"] == 4
    assert [(b["batch_id"], b["statuses"]) for b in as_json["links_batches"]] == [
        ("gifts", {"VALIDATED": 1})
    ]
    assert "links batches, newest first:" in lines and "  gifts  " in listed.stdout
    assert [(b["batch_id"], b["sheet"], b["statuses"]) for b in as_json["batches"]] == [
        ("mar", None, {"VALIDATED": 2}),
        ("feb", None, {"VALIDATED": 2}),
        ("jan", None, {"VALIDATED": 1}),
        ("q1", "Q1", {"VALIDATED": 1}),
    ]


def test_a_declined_batch_says_so_instead_of_not_final_yet(tmp_path):
    # Its rows stay VALIDATED for good; "not final yet (6)" read as if they would still go.
    home = tmp_path / "home"
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        set_ledger_policy(ledger, 'currencies:\n  "*":\n    bands:\n      - {steps: 1}\n')
        ledger.register_batch("d", "d.csv", [sim_instruction("d", 1)], [])
        ledger.set_maker("d", "mia")
        record_decision(ledger, "d", approver="bob", decision="decline", note="wrong month")
    env = payflow_env(home, tmp_path / "prefect")
    done = run_payflow(["status", "d", "--no-refresh"], env, tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-2:] == [
        "declined by bob (wrong month): nothing will be paid",
        f"next: {NEW_EXTERNAL_IDS}",
    ]
    assert "not final yet" not in done.stdout
    # The list read "1 row: 1 VALIDATED", as if it were still to be paid.
    listed = run_payflow(["status"], env, tmp_path)
    assert "by mia  1 row: 1 not sent yet; declined, never paid" in listed.stdout
    [batch] = json.loads(run_payflow(["status", "--json"], env, tmp_path).stdout)["batches"]
    assert batch["end_state"] == "declined"


def test_an_expired_batch_says_it_is_never_paid_not_payflow_pay(tmp_path):
    # It said "`payflow pay e` sends each once", and `payflow pay` then refused the batch.
    home = tmp_path / "home"
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}", clock=lambda: two_hours_ago) as led:
        set_ledger_policy(
            led, 'currencies:\n  "*":\n    bands:\n      - {steps: 1}\n    expiry_hours: 1\n'
        )
        led.register_batch("e", "e.csv", [sim_instruction("e", 1)], [])
    env = payflow_env(home, tmp_path / "prefect")
    done = run_payflow(["status", "e", "--no-refresh"], env, tmp_path)
    assert done.returncode == 1
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("its approval expired at ") and last.endswith(NEW_EXTERNAL_IDS), last
    assert "payflow pay" not in done.stdout
    end = json.loads(run_payflow(["status", "e", "--json", "--no-refresh"], env, tmp_path).stdout)
    assert end["end_state"]["state"] == "expired"


def test_a_batch_with_held_rows_says_how_to_pay_them(tmp_path):
    home = tmp_path / "home"
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("a", "a.csv", [sim_instruction("a", 1)], [])
        ledger.claim_for_submit("a", "w", 10)
        ledger.mark_created("a-1", "p-1", "COMPLETED", None)
        repeat = sim_instruction("a", 1)._replace(external_id="h-1")
        ledger.register_batch("h", "h.csv", [repeat], [])
        assert ledger.batch_summary("h") == {"HELD": 1}
    done = run_payflow(["status", "h", "--no-refresh"], payflow_env(home, tmp_path / "p"), tmp_path)
    assert done.returncode == 1
    assert done.stdout.strip().splitlines()[-1] == (
        "held rows repeat a recent payout: `payflow pay h --allow-repeat` pays them once another "
        "person approves"
    )


def test_rejected_rows_are_listed_with_their_reasons(tmp_path):
    # A one-batch run ended "2 of 3 rows not paid (PROCESSING 1, REJECTED 1): payflow status
    # B", and status read "REJECTED 1" with no row, no reason and no rejects report.
    home = tmp_path / "home"
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        bad = RejectedRow(3, "r-2", ["amount: amount has more than two decimals"])
        ledger.register_batch("r", "r.csv", [sim_instruction("r", 1)], [bad])
    env = payflow_env(
        home, tmp_path / "p", PAYFLOW_API_URL="http://127.0.0.1:9", PAYFLOW_API_TOKEN="t"
    )

    done = run_payflow(["status", "r", "--no-refresh"], env, tmp_path)

    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert lines[3:5] == [
        "rejected in the file, never sent (1 row): fix them in the file and run it again (rows "
        "already sent are not paid twice)",
        "  row      3  r-2  amount: amount has more than two decimals",
    ]


def test_a_batch_whose_pay_run_waits_for_its_approval_says_approving_resumes_it(tmp_path):
    # A daily batch's deployed pay run paused for approval; status said "`payflow approve`,
    # then `payflow pay`", while approving resumes that run, which pays the batch itself.
    home = tmp_path / "home"
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        big = sim_instruction("w", 1)._replace(amount=Decimal(2_000_000))  # XOF: 1 step
        ledger.register_batch("w", "w.csv", [big], [])
        ledger.set_maker("w", "mia")
    # Against an API (never asked with --no-refresh), as a deployment's worker pays.
    env = payflow_env(
        home, tmp_path / "p", PAYFLOW_API_URL="http://127.0.0.1:9", PAYFLOW_API_TOKEN="t"
    )
    before = run_payflow(["status", "w", "--no-refresh"], env, tmp_path)
    assert (
        before.stdout.strip()
        .splitlines()[-1]
        .endswith("`payflow approve w`, then `payflow pay w` sends each once")
    )
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        beat(ledger, "host:1:n", "w", "flow run tireless-tiger")

    waiting = run_payflow(["status", "w", "--no-refresh"], env, tmp_path)

    assert waiting.returncode == 1
    assert waiting.stdout.strip().splitlines()[-1] == (
        "rows not sent (VALIDATED) or left being sent (SUBMITTING): the batch is waiting for "
        "approval by 1 person, never its maker: `payflow approve w` resumes the pay run waiting "
        "for it (flow run tireless-tiger), which then sends each once"
    )


def test_rows_a_stopped_run_left_unsent_or_being_sent_say_how_to_go_on(tmp_path):
    # After Ctrl-C a batch read "SUBMITTING 51" and nothing said how to send them.
    home = tmp_path / "home"
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("s", "s.csv", [sim_instruction("s", 1), sim_instruction("s", 2)], [])
        ledger.claim_for_submit("s", "w", 1)
        assert ledger.batch_summary("s") == {"SUBMITTING": 1, "VALIDATED": 1}
    # Against an API (never asked with --no-refresh), which keeps its payouts between runs.
    env = payflow_env(
        home, tmp_path / "p", PAYFLOW_API_URL="http://127.0.0.1:9", PAYFLOW_API_TOKEN="t"
    )
    done = run_payflow(["status", "s", "--no-refresh"], env, tmp_path)
    assert done.returncode == 1
    assert done.stdout.strip().splitlines()[-1] == (
        "rows not sent (VALIDATED) or left being sent (SUBMITTING): unless a run pays the batch "
        "now, `payflow pay s` sends each once (a SUBMITTING row is looked up at the service first)"
    )
    # On the embedded sandbox `payflow pay s` refuses the batch: the SUBMITTING row's POST may
    # have reached a past run's sandbox, which is gone (it was advised all the same).
    embedded = run_payflow(["status", "s"], payflow_env(home, tmp_path / "p"), tmp_path)
    assert embedded.returncode == 1
    assert embedded.stdout.strip().splitlines()[-1] == (
        "rows not sent (VALIDATED) or left being sent (SUBMITTING): 1 row went to a past run's "
        "embedded sandbox, which ended with that run, so no run can resume the batch; to pay "
        "the file on the sandbox, run it with a fresh ledger (another PAYFLOW_HOME)"
    )
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("a", "a.csv", [sim_instruction("a", 1)], [])
        ledger.claim_for_submit("a", "w", 1)
        ledger.mark_created("a-1", "p-1", "PROCESSING", None)
    sent = run_payflow(["status", "a", "--no-refresh"], env, tmp_path)
    assert sent.returncode == 1
    assert "payflow pay" not in sent.stdout  # a row the service holds is followed, not sent


async def test_refunds_completed_after_the_run_stopped_tracking_show_completed(
    tmp_path, make_sandbox
):
    # A refund batch read PENDING (its order never REFUND) whatever the service said, with
    # --refresh as without, until `payflow refund FILE` ran again.
    sandbox = make_sandbox(final_delay=0.3)
    made = httpx.post(
        f"{sandbox.url}/_sandbox/orders/bulk",
        json={"count": 2, "amount": "40.00", "currency": "RUB", "apiRefunds": True},
        timeout=30,
    )
    orders = made.json()["ids"]
    path = tmp_path / "back.csv"
    path.write_text("orderId,externalId\n" + "".join(f"{o},rf-{n}\n" for n, o in enumerate(orders)))
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    with Ledger.open(ledger_url) as ledger:
        async with AsyncPayoutsClient(sandbox.token, base_url=sandbox.url, timeout=5) as client:
            batch = (await prepare_refunds(path, client, ledger)).batch_id
            await submit_refunds(client, ledger, batch, worker_id="w1", callback_url=None)
    deadline = time.monotonic() + 60
    while {r["status"] for r in sandbox_stats(sandbox.url)["refunds"]} != {"COMPLETED"}:  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the sandbox never completed the refunds"
        time.sleep(0.1)
    env = payflow_env(
        home, tmp_path / "prefect", PAYFLOW_API_URL=sandbox.url, PAYFLOW_API_TOKEN=sandbox.token
    )

    code, shown = _status(env, tmp_path, batch, "--no-refresh")
    assert (code, shown["refunds"]) == (1, {"PENDING": 2})
    code, shown = _status(env, tmp_path, batch, "--refresh")
    expected = {"batch_id": batch, "refunds": {"COMPLETED": 2}, "pending": [], "sandbox": False}
    # Under every limit of the policy: approved with no step left, by nobody.
    approval = {"state": "Approved", "steps_left": 0, "approved_by": [], "declined_by": None}
    assert (code, shown) == (0, {**expected, "approval": approval})
    with Ledger.open(ledger_url) as ledger:
        assert {r.order_status for r in ledger.refunds.rows(batch)} == {"REFUND"}
        assert ("PENDING", "COMPLETED", "poll", None) in ledger.refunds.events("rf-0")


def test_a_checker_without_the_api_token_reads_the_ledger_and_is_told_so(tmp_path, make_sandbox):
    # Makers and checkers hold no API token (docs/multi-user.md): `status` of a batch quiet for
    # over a minute ended "PAYFLOW_API_URL is set but PAYFLOW_API_TOKEN is not", exit 2.
    sandbox = make_sandbox()
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch("b", "b.csv", [sim_instruction("b", 1)], [])
        ledger.claim_for_submit("b", "w", 10)
        ledger.mark_created("b-1", "p-1", "CREATED", None)
    _age(ledger_url, "b", timedelta(minutes=2))
    checker = payflow_env(home, tmp_path / "prefect", PAYFLOW_API_URL=sandbox.url)
    done = run_payflow(["status", "b", "--json"], checker, tmp_path)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["statuses"] == {"CREATED": 1}
    assert done.stderr.strip() == NOT_REFRESHED
    asked = run_payflow(["status", "b", "--refresh"], checker, tmp_path)
    assert asked.returncode == 2 and "PAYFLOW_API_TOKEN is not" in asked.stderr
    assert sandbox_stats(sandbox)["payoutReadsById"] == {}


@pytest.mark.slow  # four commands run as subprocesses
async def test_status_refresh_asks_about_final_rows_and_shows_the_services_word(
    tmp_path, make_sandbox
):
    # Found the next day: `payflow status` counted a reversed payout as COMPLETED, exit 0, and
    # never mentioned open findings; --refresh asked only about the rows not final.
    sandbox = make_sandbox(processing_delay=0.05, final_delay=0.1)
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    with Ledger.open(ledger_url) as ledger:
        await _submitted(ledger, sandbox, "moved", 2)
    _wait_until_completed_at_the_service(sandbox.url, 2)
    env = payflow_env(
        home, tmp_path / "prefect", PAYFLOW_API_URL=sandbox.url, PAYFLOW_API_TOKEN=sandbox.token
    )
    code, shown = _status(env, tmp_path, "moved", "--refresh")
    assert (code, shown["statuses"]) == (0, {"COMPLETED": 2})

    [reversed_payout] = [
        p["id"]
        for p in sandbox_stats(sandbox.url)["payouts"]  # type: ignore[union-attr]
        if p["externalId"] == "moved-1"
    ]
    httpx.post(
        f"{sandbox.url}/_sandbox/payouts/{reversed_payout}/status", json={"status": "CANCELED"}
    ).raise_for_status()
    with Ledger.open(ledger_url) as ledger:
        ledger.sync_findings(
            "moved",
            [Detected(2, "moved-1", FindingKind.STATUS_DIFFERS, "CANCELED at the service")],
            unchecked_rows=set(),
        )
    code, shown = _status(env, tmp_path, "moved", "--refresh")
    assert code == 1
    assert shown["statuses"] == {"COMPLETED": 2}  # the ledger cannot follow COMPLETED back
    assert shown["outcomes"] == {"paid": 1, "not paid (corrected after completion)": 1}
    [word] = shown["service_word"]  # type: ignore[misc]
    assert (word["externalId"], word["ledger"], word["service"], word["learned_by"]) == (
        "moved-1",
        "COMPLETED",
        "CANCELED",
        "poll",
    )
    assert shown["open_findings"] == 1
    text_run = run_payflow(["status", "moved", "--no-refresh"], env, tmp_path)
    assert text_run.returncode == 1
    assert "ledger COMPLETED, service CANCELED" in text_run.stdout
    assert "open findings: 1" in text_run.stdout
