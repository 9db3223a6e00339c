"""docs/deployments/several-machines.md's set-up, brought up by scripts/several_machines.py on
one machine: each machine its own process and PAYFLOW_HOME, sharing only the PostgreSQL ledger,
the S3 storage (moto on 127.0.0.1) and the Prefect server (this test process's shared one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.postgres import fresh_postgres_database
from support.shared_prefect import shared_prefect_server  # noqa: F401 (the session's server)

REPO = Path(__file__).resolve().parents[2]
# The script took 75 s to deploy alone and 213 s in all on this shared machine at load 15.
SCRIPT_TIMEOUT = 840


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(SCRIPT_TIMEOUT + 60)
def test_the_several_machines_script_pays_a_batch_once_and_the_console_serves_its_report(
    s3_server, tmp_path
):
    bucket = s3_server.new_bucket()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env = {**base, **s3_server.env}
    with fresh_postgres_database("payflow_machines") as ledger_url:
        script = subprocess.Popen(
            [
                sys.executable,
                str(REPO / "scripts" / "several_machines.py"),
                "--root",
                str(tmp_path / "machines"),
                "--ledger-url",
                ledger_url,
                "--prefect-api-url",
                os.environ["CLI_TESTS_PREFECT_API_URL"],
                "--reports-url",
                f"s3://{bucket}/reports",
                "--inbox-url",
                f"s3://{bucket}/inbox",
                "--workers",
                "1",
                "--quick",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stdout, stderr = script.communicate(timeout=SCRIPT_TIMEOUT)
        finally:
            if script.poll() is None:  # SIGTERM: the script stops each machine it started
                script.terminate()
                script.communicate(timeout=120)
    done = subprocess.CompletedProcess(script.args, script.returncode, stdout, stderr)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "QUICK CHECK PASSED" in out
    # Each machine got only what it needs: no storage keys on a receiver, no token on the
    # Prefect deployer, the storage and the load balancer's URL on the workers and the console.
    lines = done.stdout.splitlines()
    machines = dict(line.split(" settings: ", 1) for line in lines if " settings: " in line)
    assert "AWS_SECRET_ACCESS_KEY" not in machines["receiver-1"]
    assert "PAYFLOW_API_TOKEN" not in machines["deployer"]
    for name in ("worker-1", "console"):
        assert {"PAYFLOW_REPORTS_URL", "PAYFLOW_WEBHOOK_URL", "PREFECT_API_URL"} <= set(
            machines[name].split()
        )
    # The report the worker wrote is in the bucket; no machine kept one on its own disk.
    keys = [
        item["Key"]
        for item in s3_server.client().list_objects_v2(Bucket=bucket).get("Contents", [])
    ]
    assert any(k.startswith("reports/") and k.endswith("-reconciliation.xlsx") for k in keys)
    assert not list((tmp_path / "machines").glob("*/payflow/reports/*"))
    # Nothing secret printed: the sandbox's token and the storage keys.
    assert s3_server.env["AWS_SECRET_ACCESS_KEY"] not in out
    assert "sandbox-secret-token" not in out
