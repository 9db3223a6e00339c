"""`"sandbox"` in `--json` for a ledger no run has bound: unknown (null), whatever the reading
command's own settings, and no "no real money moved" line.

It read `false`, as if the ledger's rows had gone to a payments API; and reading the command's
settings instead told a checker approving without PAYFLOW_API_URL "no real money moved" of a
batch a deployment's worker pays through the API."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import payflow_env, run_payflow, sim_instruction

from payflow.ledger import Ledger


def _sandbox(args: list[str], env: dict[str, str], cwd: Path) -> object:
    done = run_payflow([*args, "--json"], env, cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["sandbox"]


def test_an_unbound_ledger_says_unknown_whatever_the_reading_commands_settings(tmp_path: Path):
    home = tmp_path / "home"
    sandbox_env = payflow_env(home, tmp_path / "prefect")
    api_env = {
        **sandbox_env,
        "PAYFLOW_API_URL": "http://127.0.0.1:9",
        "PAYFLOW_API_TOKEN": "t",
    }
    assert _sandbox(["status"], sandbox_env, tmp_path) is None
    assert _sandbox(["status"], api_env, tmp_path) is None
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("b", "b.csv", [sim_instruction("b", 1), sim_instruction("b", 2)], [])
    # Registered, nothing sent: where it is paid is the paying run's settings, not these.
    for env in (sandbox_env, api_env):
        assert _sandbox(["status", "b", "--no-refresh"], env, tmp_path) is None
        done = run_payflow(["status", "b", "--no-refresh"], env, tmp_path)
        assert "no real money" not in done.stdout + done.stderr


def test_a_ledger_older_than_bindings_with_sent_rows_says_unknown(tmp_path: Path):
    home = tmp_path / "home"
    env = payflow_env(home, tmp_path / "prefect")
    with Ledger.open(f"sqlite:///{home / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("b", "b.csv", [sim_instruction("b", 1)], [])
        ledger.claim_for_submit("b", "w", 10)
        ledger.mark_created("b-1", "p-1", "CREATED", None)
    # Its payout went somewhere nothing records: "no real money moved" may be false.
    for args in (["status"], ["status", "b", "--no-refresh"], ["rerun", "b"]):
        assert _sandbox(args, env, tmp_path) is None, args
    done = run_payflow(["status", "b", "--no-refresh"], env, tmp_path)
    assert "no real money" not in done.stdout + done.stderr
