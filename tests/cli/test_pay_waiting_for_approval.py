"""`payflow pay` of a batch that still waits for approval answers in one line (exit 1, the rules
that ask for it) before it loads Prefect or starts its temporary server: a refusal that took
about 8 CPU seconds takes under 2. With Prefect's API down the answer is the same, nothing is
sent and no pay run is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import payflow_env, run_payflow
from paid_here import run_paid_here
from support.operators import ledger_url_of
from support.servers import free_port
from support.stats import sandbox_stats

from payflow.acts.pay import PAY_STARTED
from payflow.ledger import Ledger
from payflow.ledger.actions import actions_of

# RUB 150,000 is above the default policy's first band: one approval step.
LINES = [
    "externalId,amount,currency,paymentType,requisites,bankName,name,userId",
    "wait-1,150000.00,RUB,SBP,79161234567,Т-Банк,Иван Петров,u-wait-1",
    "wait-2,1200,XOF,SIM,2250701234567,,Awa Kone,u-wait-2",
]


def test_a_pay_waiting_for_approval_is_refused_before_prefect_is_asked(
    tmp_path: Path, make_sandbox
) -> None:
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    batch = tmp_path / "big.csv"
    batch.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    batch_id = run_paid_here(batch, env, sandbox, send=False)
    # A pay that reached Prefect would end on its outage, not on the approval.
    down = {**env, "PREFECT_API_URL": f"http://127.0.0.1:{free_port()}/api"}

    refused = run_payflow(["pay", batch_id], down, tmp_path)
    assert refused.returncode == 1, refused.stderr
    said = refused.stderr.splitlines()
    assert said == [
        f"payflow: batch {batch_id} is waiting for approval by 1 person: "
        f"payflow approve {batch_id}",
        "  rule: RUB total 150000.00: above 100000 up to 5000000: 1 approval step",
        "  rule: XOF total 1200: from 0 up to 1000000: 0 approval steps",
    ], refused.stderr
    assert refused.stdout == ""

    as_json = run_payflow(["pay", batch_id, "--json"], down, tmp_path)
    assert as_json.returncode == 1, as_json.stderr
    assert json.loads(as_json.stdout) == {
        "batch_id": batch_id,
        "waiting_for_approvals": 1,
        "sandbox": False,
    }

    assert sandbox_stats(sandbox.url)["createAttempts"] == {}
    with Ledger.open(ledger_url_of(env)) as ledger:
        assert PAY_STARTED not in {a.action for a in actions_of(ledger, batch_id)}
        assert ledger.batch_counts(batch_id).to_send == 2
