"""Secrets where they belong (issue 35): makers and checkers hold no PAYFLOW_API_TOKEN, only the
paying worker does.

Real `payflow` processes over one ledger against a standalone sandbox standing in for the API.
The maker registers without the token (intake asked the API for SBP banks and services, so it
was refused): rows the lists kept in the ledger cannot check are registered marked, and the
paying worker checks them before anything is sent; the sandbox's counters prove one payout per
good row and none for a row found wrong.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_support import payflow_env, run_payflow
from support.operators import as_person, ledger_url_of, set_ledger_policy, sign_in_at
from support.stats import sandbox_stats

from payflow.ledger import Ledger

# Every batch waits for one checker, whatever its size.
ONE_CHECKER = 'currencies:\n  "*":\n    bands:\n      - {steps: 1}\n    expiry_hours: 24\n'
HEADER = "externalId,amount,currency,paymentType,requisites,name,userId,bankName"
SBERBANK = "100000000111"  # the sandbox's id of "Сбербанк"


def _json(done: subprocess.CompletedProcess[str], *codes: int) -> dict[str, Any]:
    assert done.returncode in codes, done.stdout + done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def _batch(path: Path, *rows: str) -> Path:
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_maker_and_checker_without_the_token_and_the_worker_checks_before_sending(
    tmp_path: Path, make_sandbox
) -> None:
    api = make_sandbox()
    shared = payflow_env(
        tmp_path / "home", tmp_path / "prefect", signed_in=None, PAYFLOW_API_URL=api.url
    )
    shared["PAYFLOW_LEDGER_URL"] = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    olga, petr = as_person(shared, "olga", "maker"), as_person(shared, "petr", "checker")
    with Ledger.open(ledger_url_of(shared)) as ledger:
        set_ledger_policy(ledger, ONE_CHECKER)
    worker = {**shared, "PAYFLOW_HOME": str(tmp_path / "worker"), "PAYFLOW_API_TOKEN": api.token}
    # Who pays is recorded: the operator on the paying machine signs in there, as any payer does.
    sign_in_at(ledger_url_of(shared), "wes", tmp_path / "worker", roles="maker")
    assert "PAYFLOW_API_TOKEN" not in olga and "PAYFLOW_API_TOKEN" not in petr

    # No paying process has used this ledger: no list is kept, so nothing can be checked here.
    march = _batch(
        tmp_path / "march.csv",
        f"sbp-1,500,RUB,SBP,79001230001,Anna Petrova,u-1,{SBERBANK}",
        "sbp-2,600,RUB,SBP,79001230002,Vera Ivanova,u-2,Сбербанк",
        "sbp-3,700,RUB,SBP,79001230003,Olga Smirnova,u-3,Bank of Nowhere",
        f"sbp-4,800,RUB,SBP,79001230000,Inna Orlova,u-4,{SBERBANK}",
        "sim-1,1000,XOF,SIM,2250700000001,Awa Kone,u-5,",
    )
    made = run_payflow(["run", str(march), "--yes", "--json"], olga, tmp_path)
    summary = _json(made, 1)
    batch_id = summary["batch_id"]
    assert summary["registered"] is True and summary["waiting_for_approvals"] == 1
    assert "Traceback" not in made.stderr and "PAYFLOW_API_TOKEN is not" not in made.stderr
    assert "this process holds no PAYFLOW_API_TOKEN" in made.stderr
    assert "no paying process has kept the service's lists in this ledger yet" in made.stderr
    assert f"the paying side pays it (payflow pay {batch_id})" in made.stderr
    stats = sandbox_stats(api.url)
    assert stats["createAttempts"] == {} and stats["bankLookups"] == 0

    # The checker approves and reads the batch without the token; the maker cannot pay.
    approved = _json(run_payflow(["approve", batch_id, "--json"], petr, tmp_path), 0)
    assert approved["approver"] == "petr"
    status = run_payflow(["status", batch_id], petr, tmp_path)
    assert status.returncode in (0, 1) and "Traceback" not in status.stderr, status.stderr
    refused = run_payflow(["pay", batch_id], olga, tmp_path)
    assert refused.returncode == 2
    assert "PAYFLOW_API_URL is set but PAYFLOW_API_TOKEN is not" in refused.stderr
    assert sandbox_stats(api.url)["createAttempts"] == {}

    # The worker holds the token: it checks the marked rows first, then pays the good ones once.
    paid = _json(run_payflow(["pay", batch_id, "--json"], worker, tmp_path), 1)
    assert paid["statuses"] == {"COMPLETED": 3, "SUBMIT_REJECTED": 2}, paid
    stats = sandbox_stats(api.url)
    assert stats["payoutsByExternalId"] == {"sbp-1": 1, "sbp-2": 1, "sim-1": 1}
    assert set(stats["createAttempts"]) == {"sbp-1", "sbp-2", "sim-1"}
    with Ledger.open(ledger_url_of(shared)) as ledger:
        sent = ledger.payout_instruction("sbp-2")
        assert sent is not None and sent.bank_name == SBERBANK  # the name, resolved to its id
        events = {ext: ledger.status_events(ext)[-1] for ext in ("sbp-3", "sbp-4")}
    assert "checked before sending: bankName: no bank for this phone has the id or name " in (
        events["sbp-3"].status_message or ""
    )
    assert "no bank offers SBP payouts to this phone number" in (
        events["sbp-4"].status_message or ""
    )

    # Now the lists the worker fetched are kept: the maker's next file is checked with them at
    # once (a phone looked up before), and only a new phone waits for the worker.
    april = _batch(
        tmp_path / "april.csv",
        "sbp-5,500,RUB,SBP,79001230001,Anna Petrova,u-1,Bank of Nowhere",
        f"sbp-6,900,RUB,SBP,79001230006,Lena Popova,u-6,{SBERBANK}",
        "sim-2,1500,XOF,SIM,2250700000002,Awa Kone,u-7,",
        "sim-3,1500,XOF,SIM,2250700000003,Ama Diallo,u-8,",
    )
    checked = run_payflow(["validate", str(april)], olga, tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "checked with the lists a paying process fetched, the oldest " in checked.stdout
    assert "SBP banks of 1 phone never looked up" in checked.stdout
    assert "no bank for this phone has the id or name 'Bank of Nowhere'" in checked.stdout
    assert "1 rejected" in checked.stdout, checked.stdout
    assert sandbox_stats(api.url)["createAttempts"] == stats["createAttempts"]
