"""The daily inbox on S3 (the `inbox` parameter an `s3://` URL): files dropped in a bucket of an
S3-compatible server on 127.0.0.1 (moto) are listed, taken and moved as in a folder."""

from __future__ import annotations

import pytest

from payflow.flows.daily_inbox import InboxFilesFailed, daily_payouts
from payflow.inbox import Settled, settle, waiting_files
from payflow.intake import batch_id_of
from payflow.ledger import Ledger
from payflow.storage import storage_at

GOOD = """externalId,amount,currency,paymentType,requisites,name,userId
s3-inbox-1,1000,XOF,SIM,2250700000101,Kouadio Yao,u-1
"""


@pytest.fixture
def bucket(s3_server, monkeypatch):
    """A new bucket of the test's S3 server, the standard AWS settings naming that server."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    return s3_server.new_bucket()


def _drop(s3_server, bucket: str, key: str, body: str) -> None:
    s3_server.client().put_object(Bucket=bucket, Key=key, Body=body.encode())


def _keys(s3_server, bucket: str) -> set[str]:
    listed = s3_server.client().list_objects_v2(Bucket=bucket).get("Contents", [])
    return {item["Key"] for item in listed}


def _text(s3_server, bucket: str, key: str) -> str:
    body = s3_server.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    return str(body.decode())


def test_the_inbox_on_s3_lists_its_batch_files_and_settles_them_beside_older_ones(
    s3_server, bucket
):
    for key in ("inbox/a.csv", "inbox/b.XLSX", "inbox/notes.txt", "inbox/processed/old.csv"):
        _drop(s3_server, bucket, key, "x")
    inbox = storage_at(f"s3://{bucket}/inbox")

    assert waiting_files(storage_at(f"s3://{bucket}/nothing-dropped-yet")) == []
    assert sorted(e.name for e in waiting_files(inbox)) == ["a.csv", "b.XLSX"]

    for content in ("first", "second"):
        _drop(s3_server, bucket, "inbox/pay.csv", content)
        settle(inbox, "pay.csv", Settled.FAILED, f"{content} was broken")
    assert {k for k in _keys(s3_server, bucket) if "/failed/" in k} == {
        "inbox/failed/pay.csv",
        "inbox/failed/pay.csv.why.txt",
        "inbox/failed/pay-2.csv",
        "inbox/failed/pay-2.csv.why.txt",
    }
    assert _text(s3_server, bucket, "inbox/failed/pay-2.csv") == "second"
    assert _text(s3_server, bucket, "inbox/failed/pay-2.csv.why.txt") == "second was broken\n"
    assert "inbox/pay.csv" not in _keys(s3_server, bucket)
    moved = settle(inbox, "a.csv", Settled.PROCESSED)
    assert moved == f"s3://{bucket}/inbox/processed/a.csv"
    assert settle(inbox, "b.XLSX", Settled.LEFT) == f"s3://{bucket}/inbox/b.XLSX"
    assert [e.name for e in waiting_files(inbox)] == ["b.XLSX"]


def test_the_daily_run_takes_a_file_dropped_in_s3_and_its_maker_is_the_named_operator(
    prefect_api, make_sandbox, s3_server, bucket, tmp_path, monkeypatch
):
    sandbox = make_sandbox()
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", sandbox.token)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", ledger_url)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAYFLOW_REPORTS_URL", f"s3://{bucket}/reports")
    _drop(s3_server, bucket, "inbox/good.csv", GOOD)
    _drop(s3_server, bucket, "inbox/broken.csv", "who,what\nx,y\n")

    # No such deployment: good.csv's batch is registered but, without its pay run, it stays.
    with pytest.raises(InboxFilesFailed, match="2 of 2 inbox files not paid"):
        daily_payouts(
            f"s3://{bucket}/inbox", pay_deployment="no-such-flow/no-such-deployment", maker="mia"
        )

    keys = _keys(s3_server, bucket)
    assert "inbox/good.csv" in keys
    assert {"inbox/failed/broken.csv", "inbox/failed/broken.csv.why.txt"} <= keys
    assert "inbox/broken.csv" not in keys
    assert "broken.csv" in _text(s3_server, bucket, "inbox/failed/broken.csv.why.txt")
    with Ledger.open(ledger_url) as ledger:
        header = ledger.batch_header(batch_id_of(GOOD.encode()))
    # The copy the worker read is its own: the batch's maker is the deployment's `maker`, no uid.
    assert header is not None
    assert (header.source_name, header.made_by) == ("good.csv", "mia")
