"""Two worker processes on one batch with a PostgreSQL ledger: no row is submitted twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paying_support import register, rows, states, unique
from support.stats import sandbox_stats

from payflow.ledger import Ledger, RowState

WORKER = Path(__file__).with_name("submit_worker.py")


@pytest.mark.postgres
def test_two_workers_never_submit_a_row_twice(make_sandbox, postgres_url):
    # Latency keeps both workers busy at once, so their claims really interleave.
    sandbox = make_sandbox(latency=0.02)
    batch = rows(unique("pg"), 400)
    with Ledger.open(postgres_url) as ledger:
        batch_id = register(ledger, batch)
    env = {**os.environ, "PAYFLOW_TEST_TOKEN": sandbox.token}
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), postgres_url, sandbox.url, batch_id, name],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("worker-a", "worker-b")
    ]
    outputs = [worker.communicate(timeout=240) for worker in workers]
    for worker, (_, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr
    per_worker = [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in outputs]
    assert sum(s["created"] + s["adopted"] for s in per_worker) == 400
    assert all(s["created"] > 0 for s in per_worker), "both workers must have taken rows"
    stats = sandbox_stats(sandbox.url)
    ids = [r.external_id for r in batch]
    assert {stats["createAttempts"].get(e) for e in ids} == {1}
    assert {stats["payoutsByExternalId"].get(e) for e in ids} == {1}
    service_ids = {p["externalId"]: p["id"] for p in stats["payouts"]}
    with Ledger.open(postgres_url) as ledger:
        left = [
            s
            for s in states(ledger, batch_id).values()
            if s in (RowState.VALIDATED.value, RowState.SUBMITTING.value)
        ]
        recorded = {v.external_id: v.payout_id for v in ledger.batch_rows(batch_id)}
    assert left == []
    assert recorded == {e: service_ids[e] for e in ids}
