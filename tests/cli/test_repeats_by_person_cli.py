"""A person is not paid twice because their requisites were written anew (issue 36, items 1-2).

Counted at a standalone sandbox: a file without externalIds is paid, then saved again with two
SBP phones in another accepted form (79... -> 89..., 79... -> 9...) and one account corrected
(…7006 -> …7016, same name, userId and 900.00 RUB). The phones are the payouts already made; the
corrected account is held, names the payout it repeats and what differs, and is paid only after
the maker's `--allow-repeat` and a second person's approval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow
from paid_here import run_paid_here
from support.operators import as_person
from support.stats import sandbox_stats

HEADER = "amount,currency,paymentType,requisites,name,userId,bankName"
PAID = [
    "900.00,RUB,SBP,79351230001,Иван Петров,u-1,Сбербанк",
    "900.00,RUB,SBP,79351230008,Пётр Иванов,u-2,Сбербанк",
    "900.00,RUB,BANK_ACCOUNT,40817810000000007006,Анна Смирнова,u-3,",
]
WRITTEN_ANEW = [
    "900.00,RUB,SBP,89351230001,Иван Петров,u-1,Сбербанк",
    "900.00,RUB,SBP,9351230008,Пётр Иванов,u-2,Сбербанк",
    "900.00,RUB,BANK_ACCOUNT,40817810000000007016,Анна Смирнова,u-3,",
]

# Three `payflow` runs (each a Prefect flow in a subprocess) and an approval.
pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def _posts(url: str) -> dict[str, int]:
    attempts: dict[str, int] = sandbox_stats(url)["createAttempts"]  # type: ignore[assignment]
    return attempts


def test_phone_forms_and_a_corrected_account_pay_nobody_twice_without_a_second_person(
    tmp_path: Path, make_sandbox
) -> None:
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    # Set-up: the file paid, as `payflow run --yes` leaves it.
    run_paid_here(_write(tmp_path / "march.csv", PAID), env, sandbox)
    paid = _posts(sandbox.url)
    assert len(paid) == 3 and set(paid.values()) == {1}

    again = _write(tmp_path / "march-fixed.csv", WRITTEN_ANEW)
    held = run_payflow(["run", str(again), "--yes"], env, tmp_path)

    assert held.returncode == 1, held.stdout + held.stderr
    assert _posts(sandbox.url) == paid, "a phone written anew or a corrected account paid again"
    assert "1 row held" in held.stdout, held.stdout
    lines = [text for text in held.stdout.splitlines() if "row 4 " in text and "repeats" in text]
    assert lines and "requisites …7006 -> …7016" in lines[0], held.stdout
    assert "(COMPLETED, batch " in lines[0], held.stdout

    allowed = run_payflow(["run", str(again), "--yes", "--allow-repeat", "--json"], env, tmp_path)
    assert allowed.returncode == 1, allowed.stderr
    batch_id = json.loads(allowed.stdout)["batch_id"]
    assert _posts(sandbox.url) == paid, "the maker alone paid a repeat"

    checker = as_person(env, "carl", "checker")  # a second person, signed in
    approved = run_payflow(["approve", batch_id, "--acknowledge-warnings"], checker, tmp_path)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    paying = run_payflow(["pay", batch_id, "--json"], env, tmp_path)
    assert paying.returncode == 0, paying.stdout + paying.stderr
    after = _posts(sandbox.url)
    assert len(after) == 4 and set(after.values()) == {1}, after
