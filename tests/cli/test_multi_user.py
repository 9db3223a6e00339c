"""Two people, two OS users, one ledger on one machine (docs/multi-user.md): the maker's batch
waits for the checker, she approves it as herself, it is paid once; every file is theirs only.
Before: the checker's approval ended "unexpected error (OperationalError)" (the ledger was the
maker's 0644 file), and a shared PAYFLOW_HOME in a PermissionError traceback."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from cli_support import payflow_env, write_sim_batch
from support.operators import PASSWORD
from support.os_users import OsUsers, two_os_users
from support.people import acting_as
from support.stats import sandbox_stats

from payflow.sandbox import SandboxServer

__all__ = ["two_os_users"]
pytestmark = pytest.mark.timeout(600)
# XOF 3 x 400,000: 1,200,000 is past the 0-step band, so one person other than the maker approves.
AMOUNT = "400000"


def _env(users: OsUsers, user: str, sandbox: SandboxServer, **extra: str) -> dict[str, str]:
    """The user's environment: their own PAYFLOW_HOME and PREFECT_HOME, the shared ledger."""
    home = users.home_of(user)
    env = payflow_env(
        home / ".payflow",
        home / ".prefect",
        signed_in=None,  # each person signs in as their own OS user (`sign_in`)
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_LEDGER_URL=f"sqlite:///{users.shared() / 'ledger.sqlite3'}",
        PAYFLOW_SHARED_GROUP=users.group,
    )
    kept = {k: v for k, v in env.items() if k.startswith(("PAYFLOW_", "PREFECT_"))}
    kept.update(PATH=os.environ["PATH"], LANG="C.UTF-8", HOME=str(home), USER=user, LOGNAME=user)
    kept.update(extra)
    return acting_as(kept, user)


def _mode(path: Path) -> tuple[int, str]:
    import grp

    info = path.stat()
    return stat.S_IMODE(info.st_mode), grp.getgrgid(info.st_gid).gr_name


@pytest.mark.slow
def test_two_os_users_share_a_ledger_maker_and_checker_and_it_pays_once(
    two_os_users: OsUsers, make_sandbox
) -> None:
    users, sandbox = two_os_users, make_sandbox()
    maker, checker = users.maker, users.checker
    batch = users.home_of(maker) / "march.csv"
    ids = write_sim_batch(batch, 3, f"mu-{maker}")
    batch.write_text(batch.read_text(encoding="utf-8").replace(",1000,", f",{AMOUNT},"))
    shutil.chown(batch, maker)

    # The maker makes the ledger (the group's): its first operator, an admin, signs in and adds
    # both people; each then signs in as their own OS user, the session kept in their own home.
    setup = _env(users, maker, sandbox)
    add_admin = ["console", "add-user", "boss", "--role", "admin"]
    admin = users.run(maker, add_admin, setup, answer=PASSWORD)
    assert admin.returncode == 0, admin.stderr
    assert users.run(maker, ["login", "boss"], setup, answer=PASSWORD).returncode == 0
    for name, role in ((maker, "maker"), (checker, "checker")):
        added = users.run(
            maker,
            ["console", "add-user", name, "--role", role],
            _env(users, maker, sandbox),
            answer=PASSWORD,
        )
        assert added.returncode == 0, added.stderr
    for name in (maker, checker):
        signed = users.run(name, ["login", name], _env(users, name, sandbox), answer=PASSWORD)
        assert signed.returncode == 0, signed.stderr

    made = users.run(maker, ["run", str(batch), "--yes", "--json"], _env(users, maker, sandbox))
    assert made.returncode == 1, made.stderr
    assert "waiting for approval by 1 person" in made.stderr, made.stderr
    batch_id = json.loads(made.stdout)["batch_id"]
    assert sandbox_stats(sandbox)["createAttempts"] == {}

    approved = users.run(checker, ["approve", batch_id], _env(users, checker, sandbox))
    assert approved.returncode == 0, approved.stderr
    assert f"approved by {checker}" in approved.stdout, approved.stdout

    paid = users.run(maker, ["pay", batch_id, "--json"], _env(users, maker, sandbox))
    assert paid.returncode == 0, paid.stderr
    attempts = sandbox_stats(sandbox)["createAttempts"]
    assert attempts == dict.fromkeys(ids, 1), attempts

    status = users.run(checker, ["status", batch_id, "--json"], _env(users, checker, sandbox))
    assert status.returncode == 0, status.stderr

    shared = users.shared()
    for name in ("ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm"):
        if (shared / name).exists():
            assert _mode(shared / name) == (0o660, users.group), name
    maker_home = users.home_of(maker) / ".payflow"
    assert _mode(maker_home) == (0o2770, users.group)
    assert _mode(maker_home / "logs" / "payflow.log") == (0o660, users.group)
    reports = [p for p in (maker_home / "reports").rglob("*") if p.is_file()]
    assert reports, "the pay run wrote no report"
    for report in reports:
        assert _mode(report) == (0o660, users.group), report


def test_what_two_people_cannot_share_ends_in_one_line(two_os_users: OsUsers, make_sandbox) -> None:
    users, sandbox = two_os_users, make_sandbox()
    maker, checker = users.maker, users.checker
    solo = f"sqlite:///{users.shared() / 'solo.sqlite3'}"
    # The maker's own ledger, made without the group: owner-only.
    own = _env(users, maker, sandbox, PAYFLOW_LEDGER_URL=solo)
    own.pop("PAYFLOW_SHARED_GROUP")
    own["PAYFLOW_HOME"] = str(users.home_of(maker) / "solo-home")
    assert users.run(maker, ["status"], own).returncode == 0
    assert _mode(users.shared() / "solo.sqlite3")[0] == 0o600

    cases = {
        "PAYFLOW_SHARED_GROUP": _env(
            users, checker, sandbox, PAYFLOW_LEDGER_URL=solo, PAYFLOW_SHARED_GROUP="pf-no-such"
        ),
        f"OS user {checker} is not in group {maker!r}": _env(
            users,
            checker,
            sandbox,
            PAYFLOW_SHARED_GROUP=maker,  # the maker's own group
        ),
        "share the ledger through a group (PAYFLOW_SHARED_GROUP": _env(
            users, checker, sandbox, PAYFLOW_LEDGER_URL=solo
        ),
        "PAYFLOW_HOME: this OS user cannot write": {
            **_env(users, checker, sandbox),
            "PAYFLOW_HOME": own["PAYFLOW_HOME"],
        },
    }
    for said, env in cases.items():
        refused = users.run(checker, ["status"], env)
        assert refused.returncode == 2, (said, refused.stderr)
        assert refused.stderr.count("\n") == 1 and said in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
