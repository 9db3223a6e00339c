"""Every act names an authenticated operator, whatever surface did it (issue 35, "every act goes
through one place"): `payflow reconcile`, `payflow findings --ack` and `payflow pay` take the
signed-in operator (never the OS account), refuse in one line without one, and the batch's one
history (`payflow status --history`, the console's batch page) shows each act and who did it.

Real `payflow` processes against a standalone sandbox standing in for the payments API.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from cli_support import payflow_env, run_payflow, sim_instruction
from support.operators import actor, add_people, as_person, ledger_url_of
from test_reconcile_cli import _pay_one

from payflow.acts import submit
from payflow.acts.history import batch_history
from payflow.cli.signin import NOT_SIGNED_IN
from payflow.ledger import Ledger
from payflow.ledger.actions import actions_of

REFUSED = f"payflow: {NOT_SIGNED_IN}"


def _env(tmp_path: Path, api) -> dict[str, str]:
    """Nobody signed in (PAYFLOW_USER names someone: it counts for nothing against an API)."""
    return payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        signed_in=None,
        PAYFLOW_API_URL=api.url,
        PAYFLOW_API_TOKEN=api.token,
        PAYFLOW_USER="petr",
    )


def test_reconcile_and_acknowledge_name_the_signed_in_operator_and_refuse_without_one(
    tmp_path, sandbox_server
) -> None:
    env = _env(tmp_path, sandbox_server)
    url = ledger_url_of(env)
    batch_id, payout_id = _pay_one(url, sandbox_server)
    httpx.post(
        f"{sandbox_server.url}/_sandbox/payouts/{payout_id}/status",
        json={"status": "FAILED", "statusMessage": "Corrected by the platform"},
    ).raise_for_status()

    # Nobody signed in: one line, and nothing recorded (before, the OS account was named).
    nobody = run_payflow(["reconcile", batch_id], env, tmp_path)
    assert (nobody.returncode, nobody.stderr.strip()) == (2, REFUSED), nobody.stdout
    with Ledger.open(url) as ledger:
        assert ledger.findings(batch_id) == [] and ledger.report_versions(batch_id) == []

    mia = as_person(env, "mia", "maker")
    found = run_payflow(["reconcile", batch_id, "--json"], mia, tmp_path)
    assert found.returncode == 1, found.stderr
    assert json.loads(found.stdout)["open_findings"] == 1
    with Ledger.open(url) as ledger:
        [finding] = ledger.findings(batch_id)
        assert [v.made_by for v in ledger.report_versions(batch_id)] == ["mia"]

    ack = ["findings", batch_id, "--ack", str(finding.id), "--note", "asked the manager"]
    unsigned = run_payflow(ack, env, tmp_path)
    assert (unsigned.returncode, unsigned.stderr.strip()) == (2, REFUSED), unsigned.stdout
    with Ledger.open(url) as ledger:
        assert [f.state for f in ledger.findings(batch_id)] == ["open"]

    ola = as_person(env, "ola", "checker")
    acked = run_payflow(ack, ola, tmp_path)
    assert acked.returncode == 0, acked.stderr
    assert "acknowledged by ola at " in acked.stdout

    # One history: what the console's batch page shows, `payflow status --history` prints.
    with Ledger.open(url) as ledger:
        acts = [(a.actor, a.action) for a in actions_of(ledger, batch_id)]
        page = [(line.actor, line.what) for line in batch_history(ledger, batch_id)]
    assert acts == [("mia", "reconciled"), ("ola", "finding_acknowledged")]
    assert page == [("mia", "reconciled"), ("ola", "finding acknowledged")]
    shown = run_payflow(["status", batch_id, "--history", "--no-refresh"], env, tmp_path)
    history = shown.stdout.split("history:\n", 1)[1].splitlines()
    assert "  mia  reconciled  1 payout fetched, 1 row moved, 1 finding open" in history[0]
    assert "  ola  finding acknowledged  #" in history[1]
    assert history[1].endswith("corrected_after_completion (row 2): asked the manager")
    listed = run_payflow(["status", batch_id, "--history", "--json", "--no-refresh"], env, tmp_path)
    assert [(h["by"], h["what"]) for h in json.loads(listed.stdout)["history"]] == page


def test_pay_names_who_paid_and_refuses_without_a_sign_in(tmp_path, sandbox_server) -> None:
    env = _env(tmp_path, sandbox_server)
    batch_id = "payer"
    # A maker's batch under every approval limit (the shipped policy), registered and submitted.
    with Ledger.open(ledger_url_of(env)) as ledger:
        ledger.register_batch(
            batch_id, "payer.csv", [sim_instruction(batch_id, n) for n in (1, 2)], []
        )
        add_people(ledger, mia="maker", ola="checker")
        submit(ledger, batch_id, actor(ledger, "mia"))

    nobody = run_payflow(["pay", batch_id, "--json"], env, tmp_path)
    assert (nobody.returncode, nobody.stderr.strip()) == (2, REFUSED), nobody.stdout

    ola = as_person(env, "ola")
    paid = run_payflow(["pay", batch_id, "--json"], ola, tmp_path)
    assert paid.returncode == 0, paid.stderr
    assert json.loads(paid.stdout)["statuses"] == {"COMPLETED": 2}
    with Ledger.open(ledger_url_of(env)) as ledger:
        acts = [(a.actor, a.action) for a in actions_of(ledger, batch_id)]
    assert ("ola", "pay_started") in acts and ("ola", "pay_finished") in acts
    assert acts.index(("ola", "pay_started")) < acts.index(("ola", "pay_finished"))
