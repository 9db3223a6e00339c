"""A pay run's result counts a row by its latest attempt: a rerun may have paid it."""

from __future__ import annotations

from payflow.ledger import BatchCounts
from payflow.paying import SubmitStats
from payflow.run_results import PayResult


def _result(latest: dict[str, int]) -> PayResult:
    counts = BatchCounts("b1", {"COMPLETED": 1, "FAILED": 1})
    return PayResult("b1", counts, SubmitStats(), "r.csv", "r.xlsx", sandbox=False, latest=latest)


def test_a_row_a_rerun_paid_counts_as_paid_in_the_flow_state_json_and_summary():
    # The CLI read the latest attempts, the flow did not: `payflow run` exited 0 while the
    # pay-batch run in Prefect ended Failed ("1 of 2 rows not paid") for the same batch.
    paid = _result({"COMPLETED": 2})
    assert paid.all_completed and paid.rerun_moved
    assert paid.as_json()["latest_statuses"] == {"COMPLETED": 2}
    assert paid.as_json()["statuses"] == {"COMPLETED": 1, "FAILED": 1}
    assert "Rows by latest attempt" in paid.summary_markdown()


def test_a_batch_never_rerun_is_counted_by_its_own_rows():
    for latest in ({}, {"COMPLETED": 1, "FAILED": 1}):
        own = _result(latest)
        assert not own.all_completed and not own.rerun_moved
        assert "latest_statuses" not in own.as_json()
        assert "Rows by latest attempt" not in own.summary_markdown()


def test_the_run_says_which_payouts_are_not_yet_rechecked_and_when():
    # Issue 40: the run reads the ledger and re-fetches nothing at its end; its summary says so.
    counts = BatchCounts("b1", {"COMPLETED": 2})
    result = PayResult("b1", counts, SubmitStats(), "r.csv", "r.xlsx", False, not_rechecked=2)
    line = result.not_rechecked_line()
    assert line == (
        "2 payouts not yet re-checked against the service: the scheduled reconciliation "
        "re-fetches them within 30 minutes (reconcile-pending), then daily through the "
        "correction window (reconcile-recent); `payflow reconcile b1` does it now"
    )
    assert result.as_json()["not_rechecked"] == 2 and line in result.summary_markdown()
    embedded = PayResult("b1", counts, SubmitStats(), "r.csv", "r.xlsx", True, not_rechecked=1)
    assert "the embedded sandbox ends with this run" in str(embedded.not_rechecked_line())
    rechecked = PayResult("b1", counts, SubmitStats(), "r.csv", "r.xlsx", False)
    assert rechecked.not_rechecked_line() is None
    assert "re-checked" not in rechecked.summary_markdown()
