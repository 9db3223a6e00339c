"""A full disk under `--out` (issue 36, item 4): nothing after money moved ends in exit 2.

A real full filesystem: a 16 KB tmpfs mounted for the test and filled. The pay run prints its
figures from the ledger, one line saying why the report was not written and the command that
writes it, exit 1; `payflow reconcile`, `payflow validate` and `payflow refund` alike; no
partial file is left. Mounting needs root (the machines that run this suite are): elsewhere the
tests are skipped (`support.full_disk`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow
from support.full_disk import full_folder, leftovers
from support.stats import sandbox_stats

__all__ = ["full_folder"]

HEADER = "externalId,amount,currency,paymentType,requisites,name,userId"
ROWS = [f"full-{n},1500,XOF,SIM,22507000{n:05d},Awa Kone {n},u-{n}" for n in range(1, 5)]


def _one_line(stdout: str, batch_id: str, folder: Path) -> None:
    lines = [line for line in stdout.splitlines() if line.startswith("report not written")]
    assert len(lines) == 1, stdout
    assert f"report not written to {folder}: no space left on device" in lines[0]
    assert f"`payflow reconcile {batch_id} --out DIR`" in lines[0]


# `payflow run` (a Prefect flow in a subprocess) and two `payflow reconcile`s: about 95 s.
@pytest.mark.timeout(600)
@pytest.mark.slow
def test_a_run_that_paid_before_the_disk_was_full_ends_1_with_its_figures(
    tmp_path: Path, full_folder: Path, make_sandbox
) -> None:
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    batch = tmp_path / "batch.csv"
    batch.write_text("\n".join([HEADER, *ROWS]) + "\n", encoding="utf-8")

    ran = run_payflow(["run", str(batch), "--yes", "--out", str(full_folder)], env, tmp_path)

    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr and "unexpected error" not in ran.stderr, ran.stderr
    paid = sandbox_stats(sandbox.url)["createAttempts"]
    assert paid == {f"full-{n}": 1 for n in range(1, 5)}
    assert "COMPLETED        4" in ran.stdout, ran.stdout
    batch_id = ran.stdout.split("batch ", 1)[1].split(" ", 1)[0]
    _one_line(ran.stdout, batch_id, full_folder)
    assert leftovers(full_folder) == []

    again = run_payflow(["reconcile", batch_id, "--out", str(full_folder)], env, tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "Traceback" not in again.stderr and "unexpected error" not in again.stderr
    _one_line(again.stdout, batch_id, full_folder)
    assert leftovers(full_folder) == []

    room = tmp_path / "room"
    written = run_payflow(["reconcile", batch_id, "--out", str(room), "--json"], env, tmp_path)
    assert written.returncode == 0, written.stdout + written.stderr
    assert Path(json.loads(written.stdout)["report"]).is_file()
    assert sandbox_stats(sandbox.url)["createAttempts"] == paid  # the report paid nothing


def test_validate_prints_its_figures_and_leaves_no_partial_rejects_report(
    tmp_path: Path, full_folder: Path
) -> None:
    batch = tmp_path / "batch.csv"
    batch.write_text("\n".join([HEADER, "bad-1,abc,XOF,SIM,2250700000001,A,u-1"]) + "\n")
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")

    checked = run_payflow(["validate", str(batch), "--out", str(full_folder)], env, tmp_path)

    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "Traceback" not in checked.stderr and "Exception ignored" not in checked.stderr
    assert "1 rejected" in checked.stdout
    (line,) = [text for text in checked.stdout.splitlines() if text.startswith("report not")]
    assert f"`payflow validate {batch} --out DIR`" in line
    assert leftovers(full_folder) == []


REFUNDS = Path(__file__).resolve().parents[2] / "data" / "refunds_sample.csv"


# `payflow refund` twice (Prefect flows in subprocesses): about 40 s.
@pytest.mark.timeout(600)
@pytest.mark.slow
def test_refunds_made_before_the_disk_was_full_end_1_with_their_figures(
    tmp_path: Path, full_folder: Path, make_sandbox
) -> None:
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )

    ran = run_payflow(["refund", str(REFUNDS), "--yes", "--out", str(full_folder)], env, tmp_path)

    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr and "unexpected error" not in ran.stderr, ran.stderr
    refunded = sandbox_stats(sandbox.url)["refundsByExternalId"]
    assert refunded and set(refunded.values()) == {1}, refunded
    assert "  COMPLETED        3" in ran.stdout.splitlines(), ran.stdout
    lines = [line for line in ran.stdout.splitlines() if line.startswith("report not written")]
    assert len(lines) == 1, ran.stdout
    assert f"report not written to {full_folder}: no space left on device" in lines[0]
    assert f"`payflow refund {REFUNDS} --yes --out DIR`" in lines[0]
    assert "report: " not in ran.stdout
    assert leftovers(full_folder) == []

    room = tmp_path / "room"
    again = run_payflow(
        ["refund", str(REFUNDS), "--yes", "--out", str(room), "--json"], env, tmp_path
    )
    assert again.returncode == 1, again.stdout + again.stderr
    assert Path(json.loads(again.stdout)["report"]).is_file()
    assert sandbox_stats(sandbox.url)["refundsByExternalId"] == refunded  # nothing refunded twice
