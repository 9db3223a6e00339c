"""Reports on S3 (PAYFLOW_REPORTS_URL=s3://...): a pay run writes them to an S3-compatible server
on 127.0.0.1 (moto), they are read back from it, and a console on another home serves them."""

from __future__ import annotations

import csv
import io

import pytest
from console_support import signed_in, start_console

from payflow.flows.payout_batch import payout_batch
from payflow.intake import batch_id_of
from payflow.ledger import Ledger

FILE = """externalId,amount,currency,paymentType,requisites,name,userId
s3-1,1000,XOF,SIM,2250700000101,Kouadio Yao,u-1
s3-2,1500,XOF,SIM,2250700000202,Awa Kone,u-2
s3-3,1000.5,XOF,SIM,2250700000303,Kofi Mensah,u-3
"""


def _objects(s3_server, bucket: str) -> dict[str, bytes]:
    client = s3_server.client()
    listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {
        item["Key"]: client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        for item in listed
    }


def _csv(body: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body.decode("utf-8-sig"))))


@pytest.fixture
def s3_env(s3_server, monkeypatch):
    """The standard AWS settings of the test's S3 server, and a new bucket; its name."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    return s3_server.new_bucket()


def test_a_run_writes_its_reports_to_s3_and_a_console_elsewhere_serves_them(
    prefect_api, sandbox_server, s3_server, s3_env, tmp_path, monkeypatch
):
    bucket = s3_env
    reports_url = f"s3://{bucket}/reports"
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox_server.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", sandbox_server.token)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", ledger_url)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "worker-home"))
    monkeypatch.setenv("PAYFLOW_REPORTS_URL", reports_url)
    path = tmp_path / "pay.csv"
    path.write_text(FILE, encoding="utf-8")
    batch_id = batch_id_of(FILE.encode())

    state = payout_batch(str(path), return_state=True)
    assert state.name == "Not all paid"  # s3-3's amount is refused: a rejects file too

    # Read back from the server itself: the latest report, its kept version and the rejects.
    objects = _objects(s3_server, bucket)
    latest = f"reports/{batch_id}-reconciliation.csv"
    assert {latest, latest.replace(".csv", ".xlsx")} <= set(objects)
    versions = [k for k in objects if k.startswith(f"reports/{batch_id}-reconciliation-2")]
    assert len(versions) == 2  # one CSV and one XLSX, kept
    rows = {r["external_id"]: r for r in _csv(objects[latest])}
    assert set(rows) == {"s3-1", "s3-2", "s3-3"}
    assert rows["s3-1"]["outcome"] == rows["s3-2"]["outcome"] == "paid"
    assert rows["s3-3"]["outcome"] == "rejected"
    rejects = _csv(objects[f"reports/{batch_id}-rejects.csv"])
    assert [r["externalId"] for r in rejects] == ["s3-3"]
    assert objects[latest.replace(".csv", ".xlsx")][:2] == b"PK"  # a whole XLSX (a ZIP)
    assert not (tmp_path / "worker-home" / "reports").exists()  # nothing on the worker's disk
    with Ledger.open(ledger_url) as ledger:
        [kept] = ledger.report_versions(batch_id)
    assert {kept.csv_path, kept.xlsx_path} == {f"s3://{bucket}/{key}" for key in versions}

    # The console: another home, the same ledger and storage; a real HTTP request each.
    console = start_console(
        tmp_path / "console", sandbox_server.url, ledger_url=ledger_url, reports_url=reports_url
    )
    try:
        client = signed_in(console, "mia")
        page = client.get(f"/batches/{batch_id}")
        assert page.status_code == 200, page.text
        assert f"/batches/{batch_id}/reports/{kept.id}.csv" in page.text
        assert f"/batches/{batch_id}/rejects.csv" in page.text
        served = client.get(f"/batches/{batch_id}/reports/{kept.id}.csv")
        assert served.status_code == 200
        assert served.content == objects[kept.csv_path.removeprefix(f"s3://{bucket}/")]
        assert "attachment" in served.headers["content-disposition"]
        served = client.get(f"/batches/{batch_id}/reports/{kept.id}.xlsx")
        assert served.content == objects[kept.xlsx_path.removeprefix(f"s3://{bucket}/")]
        served = client.get(f"/batches/{batch_id}/rejects.csv")
        assert served.status_code == 200
        assert served.content == objects[f"reports/{batch_id}-rejects.csv"]
        # A fresh report the console writes goes to the storage too, and is served from it.
        fresh = client.get(f"/batches/{batch_id}/report.csv")
        assert fresh.status_code == 200
        assert {r["external_id"] for r in _csv(fresh.content)} == {"s3-1", "s3-2", "s3-3"}
        console_key = f"reports/console/{batch_id}/{batch_id}-reconciliation.csv"
        assert _objects(s3_server, bucket)[console_key] == fresh.content
        assert not (tmp_path / "console" / "home" / "reports").exists()
    finally:
        console.server.stop()
        console.ctx.ledger.close()
