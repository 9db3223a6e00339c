"""Command-line dead ends an operator met, each now ending with what happened and what next:
acknowledging a finding, listing older batches, and a re-run file's counts."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from cli_support import payflow_env, run_payflow, sim_instruction
from sqlalchemy import create_engine, text
from support.operators import as_person

from payflow.approvals import record_decision
from payflow.ledger import Ledger
from payflow.ledger.findings import Detected, FindingKind
from payflow.links.records import LinkRow
from payflow.links.store import LinkStore


def _env(tmp_path: Path) -> tuple[dict[str, str], str]:
    home = tmp_path / "home"
    home.mkdir()
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    return payflow_env(home, tmp_path / "prefect", PAYFLOW_LEDGER_URL=ledger_url), ledger_url


def test_an_acknowledgement_is_said_taken_and_the_exit_names_the_findings_left_open(
    tmp_path: Path,
) -> None:
    # Found by use: `findings --ack ID --note ...` printed the list and exited 1; nothing said
    # the acknowledgement was taken, nor that the 1 was the other finding still open.
    env, ledger_url = _env(tmp_path)
    batch = f"f{secrets.token_hex(3)}"
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch(
            batch, "f.csv", [sim_instruction(batch, 1), sim_instruction(batch, 2)], []
        )
        kind = next(iter(FindingKind))
        ledger.sync_findings(
            batch,
            [Detected(2, f"{batch}-1", kind, "one"), Detected(3, f"{batch}-2", kind, "two")],
            unchecked_rows=set(),
        )
        first, second = (f.id for f in ledger.findings(batch))
    env = as_person(env, "ops", "checker")  # acknowledging is a signed-in operator's act
    acked = run_payflow(["findings", batch, "--ack", str(first), "--note", "asked"], env, tmp_path)
    assert acked.returncode == 1, acked.stderr
    assert f"finding #{first} acknowledged" in acked.stdout
    assert acked.stdout.rstrip().endswith(
        f"1 finding still open (exit 1): look into each, then `payflow findings {batch} --ack ID "
        "--note TEXT`"
    )
    last = run_payflow(["findings", batch, "--ack", str(second), "--note", "ok"], env, tmp_path)
    assert last.returncode == 0, last.stderr
    assert f"finding #{second} acknowledged" in last.stdout
    assert last.stdout.rstrip().endswith("no finding is open (exit 0)")


def _made(ledger_url: str, batch: str, *, by: str | None, days_ago: int) -> None:
    """Say who made the batch and when (the maker and time a console or `run` records)."""
    then = (datetime.now(UTC) - timedelta(days=days_ago)).replace(tzinfo=None)
    engine = create_engine(ledger_url)
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE batches SET created_at = :then, made_by = :by WHERE batch_id = :batch"),
            {"then": then, "by": by, "batch": batch},
        )
    engine.dispose()


@pytest.mark.slow  # eight commands, each a process of its own
def test_batches_lists_every_kind_searches_and_pages(tmp_path: Path) -> None:
    # Found by use: `payflow status` said "... and 10 older (payflow console lists them all)";
    # on the command line nothing listed or searched them.
    env, ledger_url = _env(tmp_path)
    with Ledger.open(ledger_url) as ledger:
        for n in range(12):
            name = f"old{n:02d}"
            ledger.register_batch(name, f"march-{n:02d}.csv", [sim_instruction(name, 1)], [])
        ledger.register_batch("dec", "declined.csv", [sim_instruction("dec", 1)], [])
        record_decision(ledger, "dec", approver="carl", decision="decline", note="no")
    for n in range(12):
        _made(ledger_url, f"old{n:02d}", by="mia" if n % 2 else "mark", days_ago=30 - n)
    _made(ledger_url, "dec", by="mia", days_ago=1)
    store = LinkStore.open(ledger_url)
    store.register("gifts", "gifts.csv", [LinkRow(2, "gift-1", "anna", Decimal("10"))])
    store.close()

    status = run_payflow(["status"], env, tmp_path)
    assert "`payflow batches --page 2` lists them" in status.stdout, status.stdout
    assert "payflow console" not in status.stdout

    first = run_payflow(["batches", "--per-page", "5"], env, tmp_path)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith("14 batches in the ledger") and lines[0].endswith("(page 1 of 3):")
    # Newest first, every kind: the links batch (now), the declined one (a day ago), then old.
    assert (
        lines[1].split()[0] == "gifts" and "  links  gifts.csv  1 row: 1 no payout yet" in lines[1]
    )
    assert lines[2].split()[0] == "dec"
    assert lines[2].endswith("declined.csv by mia  1 row: 1 not sent yet: declined by carl")
    assert "`payflow batches --page 2` (with the same options) shows the next page" in lines

    last = run_payflow(["batches", "--per-page", "5", "--page", "3", "--json"], env, tmp_path)
    shown = json.loads(last.stdout)
    assert (shown["total"], shown["page"], shown["pages"]) == (14, 3, 3)
    assert [b["batch_id"] for b in shown["batches"]] == ["old03", "old02", "old01", "old00"]

    by_mia = json.loads(
        run_payflow(
            ["batches", "--maker", "MIA", "--file", "march", "--json"], env, tmp_path
        ).stdout
    )
    assert [b["batch_id"] for b in by_mia["batches"]] == [
        "old11",
        "old09",
        "old07",
        "old05",
        "old03",
        "old01",
    ]
    since = (datetime.now(UTC) - timedelta(days=20)).date().isoformat()
    recent = json.loads(run_payflow(["batches", "--since", since, "--json"], env, tmp_path).stdout)
    assert [b["batch_id"] for b in recent["batches"]] == ["gifts", "dec", "old11", "old10"]
    declined = json.loads(
        run_payflow(["batches", "--state", "declined", "--json"], env, tmp_path).stdout
    )
    assert [(b["batch_id"], b["standing"]) for b in declined["batches"]] == [
        ("dec", "declined by carl")
    ]

    bad_date = run_payflow(["batches", "--since", "yesterday"], env, tmp_path)
    assert bad_date.returncode == 2 and "give it as YYYY-MM-DD" in bad_date.stderr
    bad_state = run_payflow(["batches", "--state", "lost"], env, tmp_path)
    assert bad_state.returncode == 2 and "is none of: not sent yet" in bad_state.stderr


def test_status_of_a_file_run_again_says_what_this_run_sent(tmp_path: Path) -> None:
    # Found by use: every run of an already-paid file listed "8 rows: 8 COMPLETED", though that
    # run sent nothing; a declined batch's rows read "VALIDATED", the ledger's word.
    env, ledger_url = _env(tmp_path)
    rows = [sim_instruction("p", n) for n in (1, 2, 3)]
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch("first", "pay.csv", rows, [])
        engine = create_engine(ledger_url)
        with engine.begin() as connection:
            connection.execute(text("UPDATE payouts SET state = 'COMPLETED'"))
        engine.dispose()
        ledger.register_batch("again", "pay.csv", rows, [])
        ledger.register_batch("no", "no.csv", [sim_instruction("n", 1)], [])
        record_decision(ledger, "no", approver="carl", decision="decline", note="wrong month")
    again = run_payflow(["status", "again"], env, tmp_path)
    assert again.returncode == 0, again.stderr
    assert (
        "sent by this run: 0; already paid: 3 (same externalId as an earlier batch: never sent "
        "again)"
    ) in again.stdout.splitlines()
    as_json = json.loads(run_payflow(["status", "again", "--json"], env, tmp_path).stdout)
    assert (as_json["sent_by_this_batch"], as_json["already_paid"]) == (0, 3)
    first = run_payflow(["status", "first"], env, tmp_path)
    assert "sent by this run" not in first.stdout
    declined = run_payflow(["status", "no"], env, tmp_path)
    assert "  declined by carl 1" in declined.stdout.splitlines(), declined.stdout
    assert "VALIDATED" not in declined.stdout


def test_a_rerun_preview_says_whether_the_rows_wait_for_a_second_person_and_why(
    tmp_path: Path,
) -> None:
    # Found by use: the preview did not say that the chosen rows would wait for a checker, nor
    # why (a blocked account, a large total).
    env, ledger_url = _env(tmp_path)
    rows = [sim_instruction("r", n) for n in (1, 2)]
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch("rb", "r.csv", rows, [])
    engine = create_engine(ledger_url)
    with engine.begin() as connection:
        for n, message in ((1, "Recipient not found"), (2, "Recipient account is blocked")):
            connection.execute(
                text(
                    "UPDATE payouts SET state = 'FAILED', status_message = :m, payout_id = :p "
                    "WHERE external_id = :e"
                ),
                {"m": message, "p": f"p-{n}", "e": f"r-{n}"},
            )
    engine.dispose()
    found = run_payflow(["rerun", "rb", "--rows", "2"], env, tmp_path)
    assert found.returncode == 0, found.stderr
    assert (
        "  the rerun is sent without waiting for anyone: the approvals policy asks for no "
        "approval (100 XOF: from 0 up to 1000000: 0 approval steps)"
    ) in found.stdout.splitlines(), found.stdout
    blocked = run_payflow(["rerun", "rb", "--rows", "2,3"], env, tmp_path)
    assert (
        "  the rerun waits for a second person (a checker, never you, the maker) before anything "
        "is sent: 1 row of class do_not_retry, a warning a person reads (the approvals policy "
        "alone asks for none: 300 XOF: from 0 up to 1000000: 0 approval steps)"
    ) in blocked.stdout.splitlines(), blocked.stdout


def test_validate_names_the_banks_that_serve_a_phone_for_an_unknown_bank(
    tmp_path: Path, sandbox_server
) -> None:  # type: ignore[no-untyped-def]
    # Found by use: "Bank of Nowhere" got no list of the banks that serve that phone, though
    # the banks list was asked for that very phone.
    path = tmp_path / "sbp.csv"
    path.write_text(
        "externalId,amount,currency,paymentType,requisites,bankName,name,userId\n"
        "sbp-1,1500,RUB,SBP,79161234567,Bank of Nowhere,Иванов Иван,u-1\n",
        encoding="utf-8",
    )
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox_server.url,
        PAYFLOW_API_TOKEN=sandbox_server.token,
    )
    done = run_payflow(["validate", str(path)], env, tmp_path)
    assert done.returncode == 1, done.stderr
    banks = httpx.get(
        f"{sandbox_server.url}/v1/payouts/banks",
        params={"account": "79161234567"},
        headers={"X-Api-Token": sandbox_server.token},
    ).json()
    named = ", ".join(repr(bank["name"]) for bank in banks[:8])
    assert f"the banks that serve this phone: {named}" in done.stdout + done.stderr, done.stdout
