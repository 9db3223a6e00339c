"""Who may pay is decided by the ledger, never by the caller's environment (issue 35, items 1-2).

Real `payflow` processes against a standalone sandbox standing in for the payments API: the
approval policy is the ledger's (an approvals file in a process's environment decides nothing),
a person acts only once signed in (`payflow login`), and PAYFLOW_USER names nobody. The
sandbox's own counters prove what was (not) paid.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_support import payflow_env, run_payflow, sim_instruction, write_sim_batch
from sqlalchemy import select
from support.operators import (
    PASSWORD,
    actor,
    add_people,
    as_person,
    ledger_url_of,
    set_ledger_policy,
)
from support.stats import sandbox_stats

from payflow.acts import submit
from payflow.approvals.policy import default_policy_text
from payflow.approvals.store import active_policy
from payflow.cli.signin import NOT_SIGNED_IN
from payflow.console.operators import operator_named
from payflow.ledger import Ledger
from payflow.ledger.tables import ConsoleAction

# The shipped default, except that every XOF batch needs one approval (the default lets a small
# one go at once): a tightening, so one admin makes it active.
SHIPPED = default_policy_text()
STRICT = SHIPPED.replace('{up_to: "1000000", steps: 0}', '{up_to: "1000000", steps: 1}')
# What a maker's own file would say: nothing needs approval.
LOOSE = 'currencies:\n  "*":\n    bands:\n      - {steps: 0}\n    expiry_hours: 24\n'


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("prefect-home")


@pytest.fixture
def api(make_sandbox):
    return make_sandbox()


@pytest.fixture
def env(tmp_path, prefect_home, api) -> dict[str, str]:
    """An environment against the standalone sandbox (an API: real money, to payflow)."""
    return payflow_env(
        tmp_path / "home", prefect_home, PAYFLOW_API_URL=api.url, PAYFLOW_API_TOKEN=api.token
    )


def _json(done: subprocess.CompletedProcess[str], *codes: int) -> dict[str, Any]:
    assert done.returncode in (codes or (0,)), done.stdout + done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def _strict_ledger_policy(env: dict[str, str]) -> None:
    """An admin makes every batch need one approval: a tightening, active at once. Set-up done
    here, as `payflow policy set` leaves it (that command's output is checked below, in
    test_policy_set_...): the subprocess cost 1-2 s of CPU."""
    with Ledger.open(ledger_url_of(env)) as ledger:
        strict = set_ledger_policy(ledger, STRICT, by="ada")
        assert (strict.version, active_policy(ledger).version) == (2, 2)


@pytest.mark.slow
def test_an_approvals_file_or_payflow_user_in_a_makers_environment_pays_nothing(tmp_path, env, api):
    _strict_ledger_policy(env)
    loose = tmp_path / "loose.yaml"
    loose.write_text(LOOSE, encoding="utf-8")
    # olga is a maker and a checker; her environment carries a loose approvals file and names
    # another person. Neither counts.
    olga = {
        **as_person(env, "olga", "maker,checker"),
        "PAYFLOW_APPROVALS_FILE": str(loose),
        "PAYFLOW_USER": "petr",
    }
    batch = tmp_path / "olga.csv"
    write_sim_batch(batch, 3, "olga")

    waiting = _json(run_payflow(["run", str(batch), "--yes", "--json"], olga, tmp_path), 1)
    assert waiting["waiting_for_approvals"] == 1
    batch_id = waiting["batch_id"]
    paying = run_payflow(["pay", batch_id, "--json"], olga, tmp_path)
    assert paying.returncode == 1 and "waiting for approval by 1 person" in paying.stderr
    own = run_payflow(["approve", batch_id], olga, tmp_path)
    assert own.returncode == 2, own.stdout
    assert f"olga made batch {batch_id} and cannot approve it" in own.stderr
    unsigned = {**olga, "PAYFLOW_HOME": str(tmp_path / "nobody")}  # PAYFLOW_USER=petr, no login
    nobody = run_payflow(["approve", batch_id], unsigned, tmp_path)
    assert nobody.returncode == 2 and "not signed in" in nobody.stderr
    again = run_payflow(["pay", batch_id, "--json"], olga, tmp_path)
    assert again.returncode == 1

    stats = sandbox_stats(api.url)
    assert stats["createAttempts"] == {} and stats["payoutsByExternalId"] == {}
    with Ledger.open(ledger_url_of(olga)) as ledger:
        assert ledger.approvals_of(batch_id) == []

    # petr, a checker who signed in, approves; then the batch pays, once.
    petr = as_person(env, "petr", "checker")
    approved = _json(run_payflow(["approve", batch_id, "--json"], petr, tmp_path))
    assert approved["approver"] == "petr" and approved["status"] == "Approved"
    paid = _json(run_payflow(["pay", batch_id, "--json"], olga, tmp_path))
    assert paid["statuses"] == {"COMPLETED": 3}
    assert sandbox_stats(api.url)["payoutsByExternalId"] == {f"olga-{n}": 1 for n in (1, 2, 3)}


def test_login_whoami_logout(tmp_path, prefect_home, api):
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        signed_in=None,
        PAYFLOW_API_URL=api.url,
        PAYFLOW_API_TOKEN=api.token,
    )
    with Ledger.open(ledger_url_of(env)) as ledger:
        add_people(ledger, mia="maker,checker")

    assert run_payflow(["whoami"], env, tmp_path).stdout.strip() == "not signed in"
    wrong = _login(env, tmp_path, "mia", "not her password")
    assert wrong.returncode == 2 and "wrong name or password" in wrong.stderr
    signed = _login(env, tmp_path, "mia", PASSWORD)
    assert signed.returncode == 0, signed.stderr
    assert signed.stdout.startswith("signed in as mia (maker, checker) until ")

    token_file = Path(env["PAYFLOW_HOME"]) / f"session-{os.getuid()}"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text(encoding="utf-8")
    ledger_bytes = (Path(env["PAYFLOW_HOME"]) / "ledger.sqlite3").read_bytes()
    assert token.encode() not in ledger_bytes  # kept hashed only
    assert hashlib.sha256(token.encode()).hexdigest().encode() in ledger_bytes

    who = run_payflow(["whoami"], env, tmp_path)
    assert who.returncode == 0 and who.stdout.startswith("mia (maker, checker), signed in until")
    out = run_payflow(["logout"], env, tmp_path)
    assert out.stdout.strip() == "signed out mia"
    assert run_payflow(["whoami"], env, tmp_path).returncode == 1
    token_file.write_text(token, encoding="utf-8")  # the old token, kept: ended for good
    assert run_payflow(["whoami"], env, tmp_path).stdout.strip() == "not signed in"


def test_policy_set_records_versions_and_needs_an_admin_and_a_second_one_to_loosen(tmp_path, env):
    strict, loose = tmp_path / "strict.yaml", tmp_path / "shipped.yaml"
    strict.write_text(STRICT, encoding="utf-8")
    loose.write_text(SHIPPED, encoding="utf-8")
    shown = run_payflow(["policy", "show"], env, tmp_path)
    assert shown.stdout.startswith("# approval policy version 1, set by payflow (shipped default)")

    maker = as_person(env, "mia", "maker,checker")
    refused = run_payflow(["policy", "set", str(loose)], maker, tmp_path)
    assert refused.returncode == 2
    assert "mia is not an admin (maker, checker): only an admin changes the approval policy" in (
        refused.stderr
    )

    ada, bea = as_person(env, "ada", "admin"), as_person(env, "bea", "admin")
    tightened = run_payflow(["policy", "set", str(strict)], ada, tmp_path)
    assert tightened.returncode == 0, tightened.stderr
    assert '+      - {up_to: "1000000", steps: 1}' in tightened.stdout  # the difference, shown
    assert "version 2 is active, set by ada" in tightened.stdout

    loosened = run_payflow(["policy", "set", str(loose)], ada, tmp_path)
    assert loosened.returncode == 0, loosened.stderr
    assert "this loosens the policy" in loosened.stderr
    assert "recorded as version 3, proposed by ada" in loosened.stdout
    assert run_payflow(["policy", "show"], env, tmp_path).stdout.startswith(
        "# approval policy version 2, set by ada"
    )
    own = run_payflow(["policy", "confirm", "3"], ada, tmp_path)
    assert own.returncode == 2 and "another admin confirms it" in own.stderr
    confirmed = run_payflow(["policy", "confirm", "3"], bea, tmp_path)
    assert confirmed.returncode == 0, confirmed.stderr
    assert "version 3 is active: proposed by ada, confirmed by bea" in confirmed.stdout

    versions = run_payflow(["policy", "show", "--versions"], env, tmp_path).stdout.splitlines()
    assert [line.split(":")[0] for line in versions] == [
        "version 1",
        "version 2",
        "version 3 (active)",
    ]
    assert "proposed by ada" in versions[2] and "confirmed by bea" in versions[2]


def _payflow() -> list[str]:
    from cli_support import PAYFLOW

    return PAYFLOW


def _login(env: dict[str, str], cwd: Path, name: str, password: str):
    return subprocess.run(
        [*_payflow(), "login", name],
        input=password + "\n",
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_payflow_user_names_nobody_on_a_ledger_no_run_has_bound(tmp_path, prefect_home):
    # A checker's laptop holds no PAYFLOW_API_URL; the shared ledger's first batch waits for a
    # deployment that has not bound it yet. "Embedded sandbox, no money moves" would have taken
    # PAYFLOW_USER=petr as a person, and the deployment's worker would then pay for real.
    env = payflow_env(tmp_path / "home", prefect_home, signed_in=None, PAYFLOW_USER="petr")
    rows = [sim_instruction("unbound", n) for n in (1, 2)]
    with Ledger.open(ledger_url_of(env)) as ledger:
        ledger.register_batch("unbound", "unbound.csv", rows, [])
        add_people(ledger, olga="maker")
        submit(ledger, "unbound", actor(ledger, "olga"))
    refused = run_payflow(["approve", "unbound"], env, tmp_path)
    assert (refused.returncode, refused.stderr.strip()) == (2, f"payflow: {NOT_SIGNED_IN}")
    with Ledger.open(ledger_url_of(env)) as ledger:
        assert ledger.approvals_of("unbound") == []


def test_a_ledgers_first_operator_is_an_admin_and_then_only_a_signed_in_admin_adds_any(
    tmp_path, prefect_home
):
    # A maker who could write a new ledger added herself and a checker of her own, and approved
    # her own batch; once it had an admin, a maker who could write it still could.
    env = payflow_env(tmp_path / "home", prefect_home, signed_in=None)

    def add(who: dict[str, str], name: str, role: str) -> subprocess.CompletedProcess[str]:
        args = ["console", "add-user", name, "--role", role]
        return subprocess.run(
            [*_payflow(), *args],
            input=PASSWORD + "\n",
            env=who,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )

    maker_first = add(env, "olga", "maker")
    assert maker_first.returncode == 2, maker_first.stdout
    assert maker_first.stderr.strip() == (
        "payflow: this ledger has no admin yet: its first operator is an admin (payflow console "
        "add-user NAME --role admin), who then signs in (payflow login NAME) and adds the "
        "others; nothing was created"
    )
    first = add(env, "ada", "admin")
    assert first.returncode == 0, first.stderr
    assert "ada is this ledger's first admin" in first.stderr
    nobody = add(env, "fake-checker", "checker")
    assert nobody.returncode == 2 and "not signed in" in nobody.stderr, nobody.stderr
    olga = as_person(env, "olga", "maker")
    own = add(olga, "olgas-friend", "checker")
    assert own.returncode == 2 and "only an admin adds operators" in own.stderr, own.stderr
    with Ledger.open(ledger_url_of(env)) as ledger:
        assert operator_named(ledger, "fake-checker") is None
        assert operator_named(ledger, "olgas-friend") is None
    assert add(as_person(env, "ada"), "petr", "checker").returncode == 0
    with Ledger.open(ledger_url_of(env)) as ledger, ledger.engine.connect() as conn:
        added = conn.execute(
            select(ConsoleAction.actor, ConsoleAction.detail)
            .where(ConsoleAction.action == "operator_added")
            .order_by(ConsoleAction.id)
        ).all()
    # who added whom: the first admin added herself, then she added petr (olga, a test's
    # setup, was stored directly)
    assert [tuple(row) for row in added] == [
        ("ada", "ada, roles admin"),
        ("ada", "petr, roles checker"),
    ]
