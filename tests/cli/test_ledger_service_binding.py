"""One ledger, one kind of payments service: rows paid on the embedded sandbox are never taken
for payouts of the API, nor the other way round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow, write_sim_batch
from paid_here import run_paid_here
from support.operators import ledger_url_of
from support.servers import free_port
from support.stats import sandbox_stats

from payflow.ledger import Ledger


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Prefect home for the module."""
    return tmp_path_factory.mktemp("prefect-home")


def test_a_file_paid_on_the_embedded_sandbox_is_not_read_as_paid_by_the_api(
    tmp_path, prefect_home, make_sandbox
):
    # The operator tries the file on the sandbox, then sets the API: the ledger said "2 already
    # paid", COMPLETED, exit 0, and the API (here a sandbox of its own) received no payout.
    batch = tmp_path / "tried-first.csv"
    write_sim_batch(batch, 2, "tried")
    home = tmp_path / "home"
    tried = payflow_env(home, prefect_home)
    batch_id = run_paid_here(batch, tried)  # set-up: what `payflow run --yes` leaves
    assert _summary(tried, batch_id) == {"COMPLETED": 2}

    api = make_sandbox()
    env = payflow_env(home, prefect_home, PAYFLOW_API_URL=api.url, PAYFLOW_API_TOKEN=api.token)
    for command in (
        ["run", str(batch), "--yes", "--json"],
        ["pay", batch_id],
    ):
        refused = run_payflow(command, env, tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stdout == ""
        # Alone: pay printed the ledger's progress line ("2 rows sent, 2 final") before it.
        (line,) = refused.stderr.strip().splitlines()
        assert "holds rows paid on the embedded sandbox" in line
        assert f"at {home}" in line and "nothing was sent" in line
    refresh = run_payflow(["status", batch_id, "--refresh"], env, tmp_path)
    assert refresh.returncode == 2, refresh.stdout + refresh.stderr
    assert "holds rows paid on the embedded sandbox" in refresh.stderr.strip().splitlines()[-1]
    # It asked the API about the sandbox's payouts: each a "missing at the service" finding, in
    # a report with no word of the sandbox.
    reconciled = run_payflow(["reconcile", batch_id, "--json"], env, tmp_path)
    assert reconciled.returncode == 2, reconciled.stdout + reconciled.stderr
    assert reconciled.stdout == ""
    (line,) = reconciled.stderr.strip().splitlines()
    assert "holds rows paid on the embedded sandbox" in line
    assert sandbox_stats(api.url)["payouts"] == []

    # A ledger of its own for the API pays the file.
    fresh = payflow_env(
        tmp_path / "api-home", prefect_home, PAYFLOW_API_URL=api.url, PAYFLOW_API_TOKEN=api.token
    )
    paid = run_payflow(["run", str(batch), "--yes", "--json"], fresh, tmp_path)
    assert paid.returncode == 0, paid.stderr
    assert json.loads(paid.stdout)["statuses"] == {"COMPLETED": 2}
    assert len(sandbox_stats(api.url)["payouts"]) == 2


def test_a_ledger_of_the_api_refuses_the_embedded_sandbox(tmp_path, prefect_home, make_sandbox):
    api = make_sandbox()
    batch = tmp_path / "real.csv"
    write_sim_batch(batch, 1, "real")
    home = tmp_path / "home"
    env = payflow_env(home, prefect_home, PAYFLOW_API_URL=api.url, PAYFLOW_API_TOKEN=api.token)
    batch_id = run_paid_here(batch, env, api)  # set-up: what `payflow run --yes` leaves
    assert _summary(env, batch_id) == {"COMPLETED": 1}

    # PAYFLOW_API_URL forgotten: the embedded sandbox would write emulated outcomes beside the
    # API's, and report them with "no real money moved".
    forgot = run_payflow(["run", str(batch), "--yes"], payflow_env(home, prefect_home), tmp_path)
    assert forgot.returncode == 2, forgot.stdout + forgot.stderr
    (line,) = forgot.stderr.strip().splitlines()
    assert "holds rows sent to a payments API" in line and "set PAYFLOW_API_URL" in line
    # pay read the API's payout as the sandbox's: its result from the ledger, "sandbox: no real
    # money moved", exit 0.
    pay = run_payflow(["pay", batch_id], payflow_env(home, prefect_home), tmp_path)
    assert (pay.returncode, pay.stdout) == (2, ""), pay.stdout + pay.stderr
    (line,) = pay.stderr.strip().splitlines()
    assert "holds rows sent to a payments API" in line
    status = run_payflow(["status", "--json"], payflow_env(home, prefect_home), tmp_path)
    assert status.returncode == 0, status.stderr  # reading the ledger needs no service

    console = run_payflow(
        ["console", "--port", str(free_port())],
        payflow_env(home, prefect_home),
        tmp_path,
        timeout=60,
    )
    assert console.returncode == 2, console.stdout + console.stderr
    (line,) = console.stderr.strip().splitlines()
    assert "holds rows sent to a payments API" in line


def _summary(env: dict[str, str], batch_id: str) -> dict[str, int]:
    with Ledger.open(ledger_url_of(env)) as ledger:
        return ledger.batch_summary(batch_id)


MERCHANT_A = "6d1c3c0e-2f7a-4c55-9a51-0c8d7e3b1a01"
MERCHANT_B = "9b4e2d71-5a3c-4e8f-b1d6-2c7a8e9f0b02"


def test_a_ledger_of_one_merchant_refuses_another_merchants_token(
    tmp_path, prefect_home, make_sandbox
):
    # Rows paid with merchant A's token read COMPLETED; run with merchant B's token (a test
    # account, another company's), the same file said "already paid" and B paid nobody.
    first = make_sandbox(merchant_id=MERCHANT_A)
    batch = tmp_path / "merchants.csv"
    write_sim_batch(batch, 2, "merchant")
    home = tmp_path / "home"
    env_a = payflow_env(
        home, prefect_home, PAYFLOW_API_URL=first.url, PAYFLOW_API_TOKEN=first.token
    )
    batch_id = run_paid_here(batch, env_a, first)  # set-up: what `payflow run --yes` leaves
    assert _summary(env_a, batch_id) == {"COMPLETED": 2}

    second = make_sandbox(merchant_id=MERCHANT_B)
    env_b = payflow_env(
        home, prefect_home, PAYFLOW_API_URL=second.url, PAYFLOW_API_TOKEN=second.token
    )
    for command in (
        ["run", str(batch), "--yes", "--json"],
        ["pay", batch_id],
        ["status", batch_id, "--refresh"],
    ):
        refused = run_payflow(command, env_b, tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        line = refused.stderr.strip().splitlines()[-1]
        assert f"holds payouts of merchant {MERCHANT_A}" in line, refused.stderr
        assert f"is merchant {MERCHANT_B}'s" in line and "nothing was sent" in line
    for server in (["console"], ["links", "serve"]):
        command = [*server, "--port", str(free_port())]
        serving = run_payflow(command, env_b, tmp_path, timeout=60)
        assert serving.returncode == 2, serving.stdout + serving.stderr
        (line,) = serving.stderr.strip().splitlines()
        assert f"holds payouts of merchant {MERCHANT_A}" in line
    assert sandbox_stats(second.url)["payouts"] == []
    assert len(sandbox_stats(first.url)["payouts"]) == 2

    # The console asks the API whose token it holds before it starts: a refused token is one
    # line, not "unexpected error (AuthError)".
    wrong = payflow_env(
        home, prefect_home, PAYFLOW_API_URL=first.url, PAYFLOW_API_TOKEN="not-the-token"
    )
    console = run_payflow(["console", "--port", str(free_port())], wrong, tmp_path, timeout=60)
    assert console.returncode == 2, console.stdout + console.stderr
    (line,) = console.stderr.strip().splitlines()
    assert "refused the token" in line and "nothing started" in line

    # Merchant A's own token still runs the ledger: the file pays nothing twice.
    again = run_payflow(["run", str(batch), "--yes", "--json"], env_a, tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(sandbox_stats(first.url)["payouts"]) == 2
