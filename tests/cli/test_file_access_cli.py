"""What payflow creates is its owner's only (0600 / 0700), or its group's with
PAYFLOW_SHARED_GROUP (0660 / 02770): the ledger held every recipient's requisites and the
operators' password hashes in a 0644 file."""

from __future__ import annotations

import grp
import os
import stat
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow

pytestmark = pytest.mark.timeout(300)
BAD_BATCH = (
    "externalId,amount,currency,paymentType,requisites,name,userId\n"
    "fa-1,100,XOF,SIM,2250700001101,Awa Kone,u-1\n"
    "fa-2,-5,XOF,SIM,2250700001202,Yao Kouadio,u-2\n"
)


def _created(tmp_path: Path, **extra: str) -> dict[str, tuple[int, int]]:
    """Run `payflow status` and `payflow validate` on a fresh home (Prefect's home under it, as
    by default); the mode and group of each thing they created, by path under the home."""
    home = tmp_path / "home"
    env = payflow_env(home, tmp_path / "unused", **extra)
    env.pop("PREFECT_HOME")  # payflow's own: PAYFLOW_HOME/prefect
    (tmp_path / "bad.csv").write_text(BAD_BATCH, encoding="utf-8")
    for args in (["status"], ["validate", "bad.csv"]):
        done = run_payflow(args, env, tmp_path)
        assert done.returncode in (0, 1), done.stderr
    found = {".": home.stat()} | {str(p.relative_to(home)): p.stat() for p in home.rglob("*")}
    return {name: (stat.S_IMODE(info.st_mode), info.st_gid) for name, info in found.items()}


def test_everything_payflow_creates_is_its_owners_only(tmp_path: Path) -> None:
    created = _created(tmp_path)
    for name in (".", "logs", "prefect", "reports"):
        assert created[name][0] == 0o700, (name, oct(created[name][0]))
    files = [name for name in created if (tmp_path / "home" / name).is_file()]
    assert "ledger.sqlite3" in files and "logs/payflow.log" in files
    assert any(name.startswith("reports/") for name in files), files
    for name in files:
        assert created[name][0] == 0o600, (name, oct(created[name][0]))


def test_a_shared_group_gets_what_payflow_creates(tmp_path: Path) -> None:
    group = grp.getgrgid(os.getegid())
    created = _created(tmp_path, PAYFLOW_SHARED_GROUP=group.gr_name)
    for name in (".", "logs", "prefect", "reports"):
        assert created[name] == (0o2770, group.gr_gid), (name, oct(created[name][0]))
    for name in ("ledger.sqlite3", "logs/payflow.log"):
        assert created[name] == (0o660, group.gr_gid), (name, oct(created[name][0]))
    reports = [n for n in created if n.startswith("reports/") and n.endswith(".csv")]
    assert reports and all(created[n] == (0o660, group.gr_gid) for n in reports), reports


def test_a_shared_group_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    env = payflow_env(tmp_path / "home", tmp_path / "prefect", PAYFLOW_SHARED_GROUP="pf-no-such")
    refused = run_payflow(["status"], env, tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.startswith(
        "payflow: bad setting PAYFLOW_SHARED_GROUP: no group named 'pf-no-such' on this machine"
    ), refused.stderr
    assert refused.stderr.count("\n") == 1
