"""`payflow reconcile` and `payflow findings` as an operator runs them, against a sandbox."""

from __future__ import annotations

import asyncio
import json
import secrets
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from cli_support import payflow_env, run_payflow
from openpyxl import load_workbook
from support.stats import sandbox_stats, set_faults

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.model import PayoutInstruction
from payflow.paying import submit_batch, track_batch


def _pay_one(ledger_url: str, sandbox, *, rows: int = 1) -> tuple[str, str]:
    """Pay a batch of `rows` rows, two requests in flight at most; its first payout's id."""
    batch_id = f"cli-{secrets.token_hex(3)}"
    paid = [
        PayoutInstruction(
            n + 2, f"{batch_id}-{n}", Decimal(10), "XOF", "SIM", f"22507{n:05d}", "A", f"u{n}"
        )
        for n in range(rows)
    ]

    async def pay() -> None:
        with Ledger.open(ledger_url) as ledger:
            ledger.register_batch(batch_id, "cli.csv", paid, [])
            async with AsyncPayoutsClient(
                sandbox.token, base_url=sandbox.url, max_in_flight=2
            ) as client:
                await submit_batch(
                    client, ledger, batch_id, worker_id="w", chunk_size=5, callback_url=None
                )
                await track_batch(
                    client, ledger, batch_id, deadline=2, poll_interval=0.05, quiet_period=0
                )

    asyncio.run(pay())
    with Ledger.open(ledger_url) as ledger:
        payout_id = next(ledger.batch_rows(batch_id)).payout_id
    assert payout_id
    return batch_id, payout_id


def test_reconcile_fetches_as_many_at_once_as_its_own_setting_says(tmp_path, make_sandbox) -> None:
    # PAYFLOW_RECONCILE_CONCURRENCY above PAYFLOW_MAX_IN_FLIGHT did nothing: the client was
    # built with the pay run's bound, and the reconciliation's slots waited behind it.
    sandbox = make_sandbox()
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    batch_id, _ = _pay_one(ledger_url, sandbox, rows=12)
    paid = sandbox_stats(sandbox)
    assert paid["peakRequestsInFlight"] <= 2
    set_faults(sandbox, latency=0.3)  # every fetch waits: the slots fill before one answers
    env = payflow_env(
        home,
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_MAX_IN_FLIGHT="2",
        PAYFLOW_RECONCILE_CONCURRENCY="6",
    )

    done = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["open_findings"] == 0
    assert "rows reconciled" not in done.stderr  # under 10 s: no progress line
    stats = sandbox_stats(sandbox)
    assert stats["payoutReads"] - paid["payoutReads"] == 12
    assert stats["peakRequestsInFlight"] == 6


def test_reconcile_reports_a_correction_and_findings_acknowledges_it(
    tmp_path, sandbox_server
) -> None:
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    batch_id, payout_id = _pay_one(ledger_url, sandbox_server)
    env = payflow_env(
        home,
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox_server.url,
        PAYFLOW_API_TOKEN=sandbox_server.token,
    )
    clean = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert json.loads(clean.stdout)["open_findings"] == 0

    httpx.post(
        f"{sandbox_server.url}/_sandbox/payouts/{payout_id}/status",
        json={"status": "FAILED", "statusMessage": "Corrected by the platform"},
    ).raise_for_status()
    found = run_payflow(["reconcile", batch_id, "--out", str(tmp_path / "out")], env, tmp_path)
    assert found.returncode == 1, found.stderr
    assert "Open findings: 1" in found.stdout
    assert (tmp_path / "out" / f"{batch_id}-reconciliation.xlsx").is_file()

    listed = json.loads(run_payflow(["findings", batch_id, "--json"], env, tmp_path).stdout)
    assert [(f["kind"], f["state"]) for f in listed] == [("corrected_after_completion", "open")]
    no_note = run_payflow(["findings", batch_id, "--ack", str(listed[0]["id"])], env, tmp_path)
    assert no_note.returncode == 2 and "--note" in no_note.stderr
    assert "Traceback" not in no_note.stderr
    acked = run_payflow(
        ["findings", batch_id, "--ack", str(listed[0]["id"]), "--note", "asked the manager"],
        env,
        tmp_path,
    )
    assert acked.returncode == 0 and "acknowledged" in acked.stdout
    # Who acknowledged it, when, and their note: kept in the ledger and shown nowhere before.
    assert "acknowledged by " in acked.stdout and ": asked the manager" in acked.stdout
    # Read and noted by a person, the finding no longer keeps the batch open: `findings` said
    # exit 0 while `payflow reconcile` (and the daily reconcile runs) stayed at "Open findings:
    # 1", exit 1, for good. The report still lists it.
    again = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
    assert again.returncode == 0, again.stderr
    counted = json.loads(again.stdout)
    assert (counted["open_findings"], counted["acknowledged_findings"]) == (0, 1)
    report = Path(counted["csv"]).read_text(encoding="utf-8-sig")
    assert "corrected_after_completion" in report
    [finding] = json.loads(run_payflow(["findings", batch_id, "--json"], env, tmp_path).stdout)
    assert finding["note"] == "asked the manager" and finding["acknowledged_by"]
    assert finding["acknowledged_at"]
    sheet = load_workbook(counted["report"])["findings"]
    header, row = (list(line) for line in sheet.iter_rows(values_only=True))
    acknowledged = dict(zip(header, row, strict=True))
    assert acknowledged["acknowledgement_note"] == "asked the manager"
    assert acknowledged["acknowledged_by"] == finding["acknowledged_by"]

    unknown = run_payflow(["reconcile", "no-such-batch"], env, tmp_path)
    assert unknown.returncode == 2 and "no batch" in unknown.stderr


def test_reconcile_without_an_api_refuses_instead_of_reporting_every_payout_missing(
    tmp_path, sandbox_server
) -> None:
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    batch_id, _ = _pay_one(ledger_url, sandbox_server)
    env = payflow_env(home, tmp_path / "prefect")  # no PAYFLOW_API_URL: the embedded sandbox
    result = run_payflow(["reconcile", batch_id], env, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "PAYFLOW_API_URL" in lines[0], result.stderr
    with Ledger.open(ledger_url) as ledger:
        assert ledger.findings(batch_id) == []
    # A mistyped batch id is named as such, not as a missing API.
    typo = run_payflow(["reconcile", batch_id[:-1]], env, tmp_path)
    assert (typo.returncode, typo.stderr.strip()) == (
        2,
        f"payflow: no batch {batch_id[:-1]!r} in the ledger at {home}",
    )


@pytest.mark.slow  # four reconciliations on the command line: about 60 s here
def test_reconcile_exits_0_only_when_every_row_is_final_and_as_the_service_says(
    tmp_path, sandbox_server
) -> None:
    # Found by hand: 5 payouts of 20 still PROCESSING, and `payflow reconcile` exited 0 with no
    # count of them in its --json.
    home = tmp_path / "home"
    ledger_url = f"sqlite:///{home / 'ledger.sqlite3'}"
    batch_id = f"cli-{secrets.token_hex(3)}"
    rows = [
        PayoutInstruction(2, f"{batch_id}-1", Decimal(10), "XOF", "SIM", "2250705555", "A", "u"),
        PayoutInstruction(3, f"{batch_id}-2", Decimal(20), "XOF", "SIM", "2250700001", "B", "v"),
    ]

    async def pay() -> None:
        with Ledger.open(ledger_url) as ledger:
            ledger.register_batch(batch_id, "cli.csv", rows, [])
            async with AsyncPayoutsClient(sandbox_server.token, base_url=sandbox_server.url) as c:
                await submit_batch(
                    c, ledger, batch_id, worker_id="w", chunk_size=5, callback_url=None
                )
                await track_batch(
                    c, ledger, batch_id, deadline=1, poll_interval=0.05, quiet_period=0
                )

    asyncio.run(pay())
    env = payflow_env(
        home,
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox_server.url,
        PAYFLOW_API_TOKEN=sandbox_server.token,
    )
    stuck = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
    assert stuck.returncode == 1, stuck.stderr
    counts = json.loads(stuck.stdout)
    assert (counts["open_findings"], counts["rows_not_final"], counts["settled"]) == (0, 1, False)

    # The platform finishes the stuck one, then moves the paid one back to PROCESSING: the
    # ledger cannot follow a COMPLETED payout back, and the row is not final at the service.
    with Ledger.open(ledger_url) as ledger:
        ids = {row.row_number: row.payout_id for row in ledger.batch_rows(batch_id)}
    for row, status in ((2, "COMPLETED"), (3, "PROCESSING")):
        httpx.post(
            f"{sandbox_server.url}/_sandbox/payouts/{ids[row]}/status", json={"status": status}
        ).raise_for_status()
    moved = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
    assert moved.returncode == 1, moved.stderr
    counts = json.loads(moved.stdout)
    assert (counts["rows_not_final"], counts["rows_disagreeing_with_service"]) == (1, 1)
    text = run_payflow(["reconcile", batch_id], env, tmp_path)
    assert text.returncode == 1 and "1 row not final yet" in text.stdout, text.stdout

    httpx.post(
        f"{sandbox_server.url}/_sandbox/payouts/{ids[3]}/status", json={"status": "COMPLETED"}
    ).raise_for_status()
    done = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
    counts = json.loads(done.stdout)
    assert (done.returncode, counts["rows_not_final"], counts["settled"]) == (0, 0, True), counts


def test_reconcile_exits_1_while_rows_a_killed_run_left_are_unsent(tmp_path, sandbox_server):
    # It exited 0 with "Open findings: 0" beside "pending 166": a killed run's rows, never sent.
    home = tmp_path / "home"
    batch_id = f"cli-{secrets.token_hex(3)}"
    rows = [
        PayoutInstruction(
            n, f"{batch_id}-{n}", Decimal(10), "XOF", "SIM", f"225070000{n}", "A", "u"
        )
        for n in (2, 3)
    ]
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch(batch_id, "cli.csv", rows, [])
        assert ledger.claim_for_submit(batch_id, "gone-host:1:dead", 1)
    env = payflow_env(
        home,
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox_server.url,
        PAYFLOW_API_TOKEN=sandbox_server.token,
    )
    done = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["unsent"] == 2
    said = run_payflow(["reconcile", batch_id], env, tmp_path)
    assert said.returncode == 1
    assert f"2 rows not sent yet: payflow status {batch_id} says what comes next" in said.stdout
