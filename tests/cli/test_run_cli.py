"""`payflow run` end to end in a subprocess: quiet, exactly once across re-runs and a SIGKILL."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_support import NOISE, PAYFLOW, payflow_env, run_payflow, write_sim_batch
from paid_here import run_paid_here
from support.stats import sandbox_stats

from payflow.ledger import Ledger
from payflow.settings import SANDBOX_TOKEN_DEFAULT

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "batch_clean.csv"


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Prefect home for the module: its database is kept, so later starts are faster."""
    return tmp_path_factory.mktemp("prefect-home")


def test_sample_run_on_the_embedded_sandbox_is_quiet_and_completes(tmp_path, prefect_home):
    # The README's sample run as a fresh machine runs it: Prefect's temporary server included.
    env = payflow_env(tmp_path / "home", prefect_home, temporary_prefect=True)
    done = run_payflow(["run", str(SAMPLE), "--yes", "--json"], env, tmp_path)

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) == {
        "batch_id",
        "rows",
        "rejected",
        "submitted",
        "statuses",
        "not_rechecked",
        "report",
        "sandbox",
    }
    assert summary["statuses"] == {"COMPLETED": summary["rows"]} and summary["sandbox"] is True
    # Issue 40: the run re-fetched none of them; its embedded sandbox ends with it.
    assert summary["not_rechecked"] == summary["submitted"]
    assert Path(summary["report"]).is_file()
    for noise in NOISE:
        assert noise not in done.stderr, f"{noise!r} reached the operator:\n{done.stderr}"
    assert "no real money moved" in done.stderr
    # Prefect's own logs still exist, in the log file.
    log = (tmp_path / "home" / "logs" / "payflow.log").read_text(encoding="utf-8")
    assert "Finished in state Completed" in log
    # Invariant 6: neither the token nor a full recipient number reaches a log or the report.
    report_text = Path(summary["report"]).with_suffix(".csv").read_text(encoding="utf-8-sig")
    with SAMPLE.open(encoding="utf-8") as handle:
        requisites = [row["requisites"] for row in csv.DictReader(handle)]
    for secret in [SANDBOX_TOKEN_DEFAULT, *requisites]:
        assert secret not in log and secret not in done.stderr and secret not in report_text


@pytest.mark.timeout(600)  # three commands on a shared 2-core machine
def test_the_same_file_run_twice_creates_nothing_the_second_time(
    tmp_path, prefect_home, make_sandbox
):
    sandbox = make_sandbox()
    batch = tmp_path / "twice.csv"
    ids = write_sim_batch(batch, 12, "twice")
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )

    # The first run is set-up (what `payflow run --yes` leaves); the second is the command's.
    first = run_paid_here(batch, env, sandbox)
    assert sandbox_stats(sandbox.url)["createAttempts"] == dict.fromkeys(ids, 1)
    second = run_payflow(["run", str(batch), "--yes", "--json"], env, tmp_path)
    assert second.returncode == 0, second.stderr

    assert json.loads(second.stdout)["statuses"] == {"COMPLETED": 12}
    stats = sandbox_stats(sandbox.url)
    assert stats["createAttempts"] == dict.fromkeys(ids, 1)
    assert len(stats["payouts"]) == 12

    batch_id = json.loads(second.stdout)["batch_id"]
    assert batch_id == first
    status = run_payflow(["status", batch_id, "--json"], env, tmp_path)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout) == {
        "batch_id": batch_id,
        "statuses": {"COMPLETED": 12},
        "pending": [],
        "sandbox": False,
    }
    unknown = run_payflow(["status", "no-such-batch"], env, tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().count("\n") == 0 and "no batch" in unknown.stderr


def _submitted_so_far(url: str) -> int:
    return len(sandbox_stats(url)["payouts"])


def test_a_run_killed_mid_submit_resumes_without_duplicates_or_lost_rows(
    tmp_path, prefect_home, make_sandbox
):
    rows = 240
    sandbox = make_sandbox(latency=0.03)
    batch = tmp_path / "killed.csv"
    ids = write_sim_batch(batch, rows, "kill")
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_MAX_IN_FLIGHT="4",
        PAYFLOW_CHUNK_SIZE="40",
    )
    process = subprocess.Popen(
        [*PAYFLOW, "run", str(batch), "--yes", "--json"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while _submitted_so_far(sandbox.url) < 30:
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run never started submitting"
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    killed_at = _submitted_so_far(sandbox.url)
    assert killed_at < rows, "the kill came too late to test a resume"

    again = run_payflow(["run", str(batch), "--yes", "--json"], env, tmp_path)

    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["statuses"] == {"COMPLETED": rows}
    stats = sandbox_stats(sandbox.url)
    assert sorted(stats["payoutsByExternalId"].items()) == sorted(dict.fromkeys(ids, 1).items())
    with Path(summary["report"]).with_suffix(".csv").open(encoding="utf-8-sig") as handle:
        report = list(csv.DictReader(handle))
    assert sorted(r["external_id"] for r in report) == sorted(ids)
    assert {r["ledger_state"] for r in report} == {"COMPLETED"}
    with Ledger.open(f"sqlite:///{tmp_path / 'home' / 'ledger.sqlite3'}") as ledger:
        assert ledger.batch_summary(summary["batch_id"]) == {"COMPLETED": rows}


def test_without_yes_and_without_a_terminal_nothing_is_paid(tmp_path, prefect_home, make_sandbox):
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    done = run_payflow(["run", str(SAMPLE)], env, tmp_path)

    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "payflow: confirmation needed: run again with --yes to pay without a prompt"
    )
    assert "Traceback" not in done.stderr
    assert sandbox_stats(sandbox.url)["createAttempts"] == {}


@pytest.mark.parametrize(("piped", "code", "paid"), [("y\n", 0, True), ("no\n", 1, False)])
def test_a_piped_answer_is_the_answer(tmp_path, prefect_home, make_sandbox, piped, code, paid):
    # `echo y | payflow run FILE` worked 78 s, then said "confirmation needed" (issue 36).
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    done = subprocess.run(
        [*PAYFLOW, "run", str(SAMPLE)],
        env=env,
        cwd=tmp_path,
        input=piped,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )

    assert done.returncode == code, done.stdout + done.stderr
    assert f"[y/N]: {piped.strip()} (read from standard input)" in done.stderr
    assert "confirmation needed" not in done.stderr and "Traceback" not in done.stderr
    assert bool(sandbox_stats(sandbox.url)["createAttempts"]) is paid
