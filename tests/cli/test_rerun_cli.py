"""`payflow rerun BATCH --reviewed` as an operator runs it after a run with failed rows: what it
sent, and every row still unpaid with its statusMessage, read from the ledger at the end."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from cli_support import payflow_env, run_payflow
from paid_here import rerun_here, run_paid_here
from support.operators import ledger_url_of

from payflow.ledger import Ledger


def _api_env(tmp_path: Path, sandbox) -> dict[str, str]:
    """A fresh PAYFLOW_HOME paying through the sandbox as the payments API."""
    return payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )


def _summary(env: dict[str, str], batch_id: str) -> dict[str, int]:
    with Ledger.open(ledger_url_of(env)) as ledger:
        return ledger.batch_summary(batch_id)


def _latest(env: dict[str, str], batch_id: str) -> dict[str, int]:
    with Ledger.open(ledger_url_of(env)) as ledger:
        return ledger.latest_summary(batch_id)


def _failed_batch(tmp_path: Path, sandbox) -> tuple[dict[str, str], str, Path]:
    """A run of two rows that both fail (blocked, not found): its env, batch id and a corrections
    file for row 3."""
    batch = tmp_path / "june.csv"
    with batch.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"]
        )
        writer.writerow(["jun-1", "1000", "XOF", "SIM", "2250700011111", "Kouadio Yao", "u-1"])
        writer.writerow(["jun-2", "2000", "XOF", "SIM", "2250700022222", "Awa Kone", "u-2"])
    env = _api_env(tmp_path, sandbox)
    batch_id = run_paid_here(batch, env, sandbox)  # set-up: what `payflow run` leaves
    assert _summary(env, batch_id) == {"FAILED": 2}
    fix = tmp_path / "fix.csv"
    fix.write_text("externalId,requisites\njun-2,2250700020042\n", encoding="utf-8")
    return env, batch_id, fix


def test_a_reviewed_rerun_says_what_it_sent_and_lists_what_is_still_unpaid(
    tmp_path: Path, make_sandbox
) -> None:
    env, batch_id, fix = _failed_batch(tmp_path, make_sandbox())

    rerun = ["rerun", batch_id, "--rows", "3", "--corrections", str(fix), "--reviewed"]
    done = run_payflow(rerun, env, tmp_path)

    assert done.returncode == 1, done.stderr  # row 2 is still unpaid
    lines = done.stdout.splitlines()
    assert "  1 new attempt: jun-2-r1" in lines
    assert lines[lines.index("  rows by latest attempt:") + 1 :][:2] == [
        "    COMPLETED        1",
        "    FAILED           1",
    ]
    unpaid = lines.index("  not paid: 1 row, by statusMessage:")
    assert lines[unpaid + 1].startswith("    1 x 'Recipient account is blocked' [")
    assert lines[unpaid + 2] == "        row 2"

    # `payflow status` of the original batch: its own attempts, then the rows by latest attempt.
    status = run_payflow(["status", batch_id, "--no-refresh"], env, tmp_path)
    assert status.returncode == 1, status.stderr
    shown = status.stdout.splitlines()
    latest = shown.index("rerun in 1 batch; rows by latest attempt:")
    assert shown[latest + 1 : latest + 3] == ["  COMPLETED        1", "  FAILED           1"]
    # The row still unpaid with its statusMessage and the next step, as the run listed them:
    # the operator back the next day read "FAILED 1" with no why. Row 3, paid by the rerun,
    # is not among them.
    unpaid = shown.index("  not paid: 1 row, by statusMessage:")
    assert shown[unpaid + 1].startswith("    1 x 'Recipient account is blocked' [")
    assert shown[unpaid + 2] == "        row 2"
    assert f"  `payflow rerun {batch_id}` (it sends nothing) or in the report" in shown


def test_a_reviewed_rerun_s_json_says_what_it_sent_and_nothing_else_on_stdout(
    tmp_path: Path, make_sandbox
) -> None:
    env, batch_id, fix = _failed_batch(tmp_path, make_sandbox())
    rerun = ["rerun", batch_id, "--rows", "3", "--corrections", str(fix), "--reviewed", "--json"]

    done = run_payflow(rerun, env, tmp_path)

    assert done.returncode == 1, done.stderr  # row 2 is still unpaid
    summary = json.loads(done.stdout)
    assert (summary["reviewed"], summary["created"]) == (True, ["jun-2-r1"])
    assert summary["statuses"] == {"COMPLETED": 1, "FAILED": 1}
    # Its preview ended "nothing was sent; add --reviewed to send them" beside the attempt it
    # had just sent: the rows chosen, with no word about what to do next.
    assert summary["preview"][0] == f"batch {batch_id}: 1 row would be sent again"
    assert not any("nothing was sent" in line for line in summary["preview"]), summary
    assert "  not paid: 1 row, by statusMessage:" in done.stderr.splitlines()
    # The rerun is the signed-in maker's act, in the batch's one history (the console's too).
    asked = ["status", batch_id, "--history", "--json", "--no-refresh"]
    history = json.loads(run_payflow(asked, env, tmp_path).stdout)["history"]
    [rerun_act] = [(h["by"], h["detail"]) for h in history if h["what"] == "rerun"]
    assert rerun_act[0] == "maker" and rerun_act[1].startswith("rows 3 as ")


def test_status_of_another_batch_sharing_a_rerun_row_counts_it_by_its_latest_attempt(
    tmp_path: Path, make_sandbox
) -> None:
    sandbox = make_sandbox()
    env, batch_id, fix = _failed_batch(tmp_path, sandbox)
    # Set-up, as `payflow rerun ... --reviewed` leaves it: jun-2 paid, jun-1 still unpaid.
    assert rerun_here(batch_id, "3", fix, env, sandbox)
    assert _latest(env, batch_id) == {"COMPLETED": 1, "FAILED": 1}
    # The file run again with a row added: a new batch holding jun-1 and jun-2 as they were.
    edited = tmp_path / "june-2.csv"
    lines = (tmp_path / "june.csv").read_text(encoding="utf-8").splitlines()
    lines.append("jun-3,3000,XOF,SIM,2250700033003,Moussa Diallo,u-3")
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    second_id = run_paid_here(edited, env, sandbox)  # set-up: what `payflow run` leaves
    assert _summary(env, second_id) == {"FAILED": 2, "COMPLETED": 1}

    status = run_payflow(["status", second_id, "--no-refresh"], env, tmp_path)

    # jun-2's rerun paid it; this batch read "FAILED 2" with nothing else.
    assert status.returncode == 1, status.stderr
    shown = status.stdout.splitlines()
    latest = shown.index("rows rerun from another batch; rows by latest attempt:")
    assert shown[latest + 1 : latest + 3] == ["  COMPLETED        2", "  FAILED           1"]
    assert "  not paid: 1 row, by statusMessage:" in shown  # jun-1, blocked
    as_json = run_payflow(["status", second_id, "--no-refresh", "--json"], env, tmp_path)
    assert json.loads(as_json.stdout)["latest_statuses"] == {"COMPLETED": 2, "FAILED": 1}


def test_a_file_run_again_after_a_rerun_paid_its_failed_row_reads_paid(
    tmp_path: Path, make_sandbox
) -> None:
    sandbox = make_sandbox()
    batch = tmp_path / "july.csv"
    batch.write_text(
        "externalId,amount,currency,paymentType,requisites,name,userId\n"
        "jul-1,2000,XOF,SIM,2250700022222,Awa Kone,u-2\n",
        encoding="utf-8",
    )
    env = _api_env(tmp_path, sandbox)
    batch_id = run_paid_here(batch, env, sandbox)  # set-up: what `payflow run` leaves
    assert _summary(env, batch_id) == {"FAILED": 1}
    fix = tmp_path / "fix.csv"
    fix.write_text("externalId,requisites\njul-1,2250700020042\n", encoding="utf-8")
    # Set-up, as `payflow rerun ... --reviewed` leaves it: the row paid by its second attempt.
    assert rerun_here(batch_id, "2", fix, env, sandbox)
    assert _latest(env, batch_id) == {"COMPLETED": 1}

    again = run_payflow(["run", str(batch), "--yes"], env, tmp_path)

    # It read "FAILED 1", exit 1, and listed nothing unpaid: the rerun had paid the row.
    assert again.returncode == 0, again.stdout + again.stderr
    lines = again.stdout.splitlines()
    assert "in the ledger: 1 row: 1 already paid, 0 failed, 0 rejected, 0 pending, 0 new" in lines
    at = lines.index("  rows by latest attempt (a rerun sent some again):")
    assert lines[at + 1] == "    COMPLETED        1" and lines[at + 2].startswith("report: ")
    as_json = run_payflow(["run", str(batch), "--yes", "--json"], env, tmp_path)
    assert json.loads(as_json.stdout)["latest_statuses"] == {"COMPLETED": 1}


def test_a_rerun_on_a_new_embedded_sandbox_says_why_it_sends_nothing(tmp_path: Path) -> None:
    # Found by hand: each command's embedded sandbox is new, so a rerun there drops every row;
    # it said "is PAYFLOW_API_URL right?" to an operator who had set no such thing.
    batch = tmp_path / "june.csv"
    batch.write_text(
        "externalId,amount,currency,paymentType,requisites,name,userId\n"
        "emb-1,1000,XOF,SIM,2250700011111,Kouadio Yao,u-1\n",
        encoding="utf-8",
    )
    env = payflow_env(tmp_path / "home", tmp_path / "prefect", PAYFLOW_USER="olga")
    batch_id = run_paid_here(batch, env)  # set-up: a past run's, on its own embedded sandbox
    assert _summary(env, batch_id) == {"FAILED": 1}
    fix = tmp_path / "fix.csv"
    fix.write_text("externalId,requisites\nemb-1,2250700010042\n", encoding="utf-8")

    rerun = ["rerun", batch_id, "--rows", "2", "--corrections", str(fix), "--reviewed"]
    done = run_payflow(rerun, env, tmp_path)

    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "  dropped row 2 (emb-1): this embedded sandbox does not know this payout (the one that "
        "paid it ended with its command; no real money moved): not rerun"
    ) in done.stdout.splitlines(), done.stdout
    assert "PAYFLOW_API_URL" not in done.stdout
    assert _summary(env, batch_id) == {"FAILED": 1}
