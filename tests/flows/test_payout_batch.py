"""The one-batch deployment's flow: a file, then its batch; the run ends as the batch did."""

from __future__ import annotations

from payflow.flows.payout_batch import payout_batch
from payflow.intake import batch_id_of

FILE = """externalId,amount,currency,paymentType,requisites,name,userId
one-1,1000,XOF,SIM,2250700000101,Kouadio Yao,u-1
one-2,1000.5,XOF,SIM,2250700000202,Awa Kone,u-2
"""


def test_a_batch_not_all_paid_ends_the_run_naming_its_rows_not_1_of_1_states_failed(
    prefect_api, sandbox, tmp_path, monkeypatch
):
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", sandbox.token)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    path = tmp_path / "one.csv"
    path.write_text(FILE, encoding="utf-8")
    batch_id = batch_id_of(FILE.encode())

    state = payout_batch(str(path), out_dir=str(tmp_path / "reports"), return_state=True)

    # It read Failed("1/1 states failed."): the one-batch run's page said nothing of the batch.
    assert state.is_failed()
    assert state.name == "Not all paid"
    assert state.message == f"1 of 2 rows not paid (REJECTED 1): payflow status {batch_id}"
