"""Every output says whether the embedded sandbox served: `sandbox` in each --json summary, and
the run's closing line in what an operator reads of a ledger bound to the sandbox. Each test
runs on the embedded sandbox and against a standalone sandbox standing in for the API."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_support import payflow_env, run_payflow, write_sim_batch
from paid_here import run_paid_here
from support.operators import as_person, ledger_url_of

from payflow.ledger import Ledger

REPO = Path(__file__).resolve().parents[2]
SERVICES = ["embedded", "api"]
NO_REAL_MONEY_MOVED = "sandbox: no real money moved"  # the last line of a run on the sandbox


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Prefect home for the module."""
    return tmp_path_factory.mktemp("prefect-home")


@pytest.fixture(params=SERVICES)
def env(request, tmp_path, prefect_home, make_sandbox) -> dict[str, str]:
    """An operator's environment on the embedded sandbox, or against a standalone one (an API)."""
    if request.param == "embedded":
        return payflow_env(tmp_path / "home", prefect_home)
    api = make_sandbox()
    return payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=api.url,
        PAYFLOW_API_TOKEN=api.token,
    )


def _sandbox(env: dict[str, str]) -> bool:
    return "PAYFLOW_API_URL" not in env


def _json(done: subprocess.CompletedProcess[str], *codes: int) -> dict[str, Any]:
    assert done.returncode in (codes or (0,)), done.stdout + done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def _says_no_real_money(done: subprocess.CompletedProcess[str], sandbox: bool) -> None:
    """The closing line on the sandbox; against an API no word of the sandbox anywhere."""
    if sandbox:
        assert done.stdout.splitlines()[-1] == NO_REAL_MONEY_MOVED, done.stdout
    else:
        assert "no real money" not in done.stdout + done.stderr


def test_a_paid_batch_says_so_in_run_pay_status_and_rerun(tmp_path, env):
    sandbox = _sandbox(env)
    batch = tmp_path / "paid.csv"
    write_sim_batch(batch, 2, "honest")
    if sandbox:
        # Set-up: validate's and run's --json say sandbox on the embedded sandbox in
        # test_validate and test_run_cli; here the batch is paid as `payflow run` leaves it.
        batch_id = run_paid_here(batch, env)
        with Ledger.open(ledger_url_of(env)) as ledger:
            assert ledger.batch_summary(batch_id) == {"COMPLETED": 2}
    else:
        validated = _json(run_payflow(["validate", str(batch), "--json"], env, tmp_path))
        assert validated["sandbox"] is False
        paid = _json(run_payflow(["run", str(batch), "--yes", "--json"], env, tmp_path))
        assert paid["statuses"] == {"COMPLETED": 2} and paid["sandbox"] is False
        batch_id = paid["batch_id"]
    again = _json(run_payflow(["pay", batch_id, "--json"], env, tmp_path))
    assert again["sandbox"] is sandbox

    # Read later from the ledger: COMPLETED reads as paid money unless the output says it is not.
    status = _json(run_payflow(["status", batch_id, "--json"], env, tmp_path))
    assert status["sandbox"] is sandbox
    _says_no_real_money(run_payflow(["status", batch_id], env, tmp_path), sandbox)
    assert _json(run_payflow(["status", "--json"], env, tmp_path))["sandbox"] is sandbox
    _says_no_real_money(run_payflow(["status"], env, tmp_path), sandbox)
    preview = ["rerun", batch_id, "--all-failed"]
    assert _json(run_payflow([*preview, "--json"], env, tmp_path))["sandbox"] is sandbox
    _says_no_real_money(run_payflow(preview, env, tmp_path), sandbox)
    if not sandbox:  # reconcile refuses a past run's embedded sandbox, which is gone
        reconciled = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
        assert _json(reconciled)["sandbox"] is False


def test_an_approval_says_so(tmp_path, env):
    sandbox = _sandbox(env)
    # Over 50,000,000 XOF: two approval steps, each by another person than the maker.
    batch = tmp_path / "large.csv"
    with batch.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"]
        )
        for i in range(1, 12):
            amount, phone = 4_900_000 + i * 5, f"22508{i:08d}"
            writer.writerow([f"large-{i}", amount, "XOF", "SIM", phone, "Awa Kone", f"u-{i}"])
    waiting = _json(run_payflow(["run", str(batch), "--yes", "--json"], env, tmp_path), 1)
    assert waiting["waiting_for_approvals"] == 2 and waiting["sandbox"] is sandbox
    batch_id = waiting["batch_id"]
    first = run_payflow(["approve", batch_id, "--json"], as_person(env, "ann", "checker"), tmp_path)
    assert _json(first)["sandbox"] is sandbox
    second = run_payflow(["approve", batch_id], as_person(env, "bob", "checker"), tmp_path)
    assert second.returncode == 0, second.stderr
    _says_no_real_money(second, sandbox)


def test_refunds_and_links_say_so(tmp_path, env):
    sandbox = _sandbox(env)
    refunds = run_payflow(
        ["refund", str(REPO / "data" / "refunds_sample.csv"), "--yes", "--json"], env, tmp_path
    )
    refunded = _json(refunds, 1)  # the sample has rejected and failed rows
    assert refunded["sandbox"] is sandbox
    status = run_payflow(["status", refunded["batch_id"], "--json"], env, tmp_path)
    assert _json(status, 1)["sandbox"] is sandbox
    links = run_payflow(["links", str(REPO / "data" / "sample-links.csv"), "--json"], env, tmp_path)
    issued = _json(links, 0, 1)
    assert issued["sandbox"] is sandbox
    report = run_payflow(["links", "report", issued["batch_id"], "--json"], env, tmp_path)
    assert _json(report, 0, 1)["sandbox"] is sandbox
