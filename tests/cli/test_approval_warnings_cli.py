"""A checker sees every warning the maker saw at upload (found by an operator walk): an amount
20 times the batch's median was shown to the maker by validation, and to nobody approving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow
from support.operators import as_person
from support.stats import sandbox_stats

# The last row pays 50 times the others: a typo of two zeros, by validation's outlier rule. The
# XOF total (53,000) is under every band, so only the warning asks for a second person.
LINES = [
    "externalId,amount,currency,paymentType,requisites,name,userId,comment",
    "out-1,1000,XOF,SIM,2250700001101,Awa Kone,u-1,march",
    "out-2,1000,XOF,SIM,2250700001202,Yao Kouadio,u-2,march",
    "out-3,1000,XOF,SIM,2250700001303,Kofi Mensah,u-3,march",
    "out-4,50000,XOF,SIM,2250700001404,Ama Owusu,u-4,march",
]
OUTLIER = "out-4 (row 5): amount is more than 20 times the batch median for XOF (median 1000)"
NOTE = "comment: this column is not a payout field and is not sent"

pytestmark = pytest.mark.timeout(600)


def test_a_checker_reads_the_makers_outlier_warning_and_acknowledges_it(
    tmp_path: Path, make_sandbox
):
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect-home",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    batch = tmp_path / "outlier.csv"
    batch.write_text("\n".join(LINES) + "\n", encoding="utf-8")

    made = run_payflow(["run", str(batch), "--yes", "--json"], env, tmp_path)
    assert made.returncode == 1, made.stderr
    batch_id = json.loads(made.stdout)["batch_id"]
    assert f"warning: {OUTLIER}" in made.stderr
    assert sandbox_stats(sandbox.url)["createAttempts"] == {}, "the maker alone paid it"

    checker = as_person(env, "checker", "checker")
    refused = run_payflow(["approve", batch_id], checker, tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert OUTLIER in refused.stderr and "Traceback" not in refused.stderr
    # The refusal lists how the file was read too, as the console's page and the pause form do:
    # the checker read the warnings and not the notes, then acknowledged them unread.
    said = refused.stderr.splitlines()
    assert said[0].startswith("payflow: acknowledge these warnings to approve: "), said
    assert said[1:] == [f"  note from intake: {NOTE}"], refused.stderr

    approved = run_payflow(["approve", batch_id, "--acknowledge-warnings"], checker, tmp_path)
    assert approved.returncode == 0, approved.stderr
    lines = approved.stdout.splitlines()
    # Read with what was approved, before what comes next.
    assert lines[2:5] == [
        f"  warning acknowledged: {OUTLIER}",
        f"  note from intake: {NOTE}",
        f"nothing is paying it yet: pay it with `payflow pay {batch_id}`",
    ], approved.stdout
    paid = run_payflow(["pay", batch_id, "--json"], env, tmp_path)
    assert paid.returncode == 0, paid.stderr
    assert len(sandbox_stats(sandbox.url)["createAttempts"]) == 4
