"""A pay run's state in Prefect says whether every row was paid: Completed, or Failed named
"Not all paid" with what is left (the same words in the batch's history), while `pay_result`
still gives the callers in this process the run's figures."""

from __future__ import annotations

from pathlib import Path

from paying_support import pay_state, register, row

from payflow.flows.pay_batch import pay_result
from payflow.ledger import Ledger
from payflow.ledger.actions import last_action
from payflow.paying.run_end import FAILED, FINISHED, NOT_ALL_PAID


def _pay(sandbox, ledger: Ledger, batch_id: str, tmp_path: Path):
    return pay_state(sandbox, ledger, batch_id, tmp_path / "reports", started_by="carl")


def test_a_run_with_a_failed_payout_ends_failed_not_all_paid_and_says_what_is_left(
    prefect_api, make_sandbox, tmp_path
):
    # It ended Completed in Prefect whatever became of the payouts (`payflow run` exits 1), so
    # a daily run with a blocked recipient read green and no automation on Failed ever fired.
    sandbox = make_sandbox()
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        batch_id = register(ledger, [row("state-ok", 2), row("state-blocked", 3, last4="1111")])
        state = _pay(sandbox, ledger, batch_id, tmp_path)

        assert state.is_failed() and state.name == NOT_ALL_PAID
        assert state.message == f"1 of 2 rows not paid (FAILED 1): payflow status {batch_id}"
        result = pay_result(state)
        assert result.counts.statuses == {"COMPLETED": 1, "FAILED": 1}
        assert result.submitted == 2 and not result.all_completed
        end = last_action(ledger, batch_id, FINISHED, FAILED)
        assert end is not None and end.action == FINISHED  # it ran to its end: not "stopped"
        assert end.detail is not None
        # The console's history: no command line there.
        assert end.detail.endswith("; 1 of 2 rows not paid (FAILED 1)")


def test_a_run_that_paid_every_row_completes(prefect_api, make_sandbox, tmp_path):
    sandbox = make_sandbox()
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        batch_id = register(ledger, [row("state-all-1", 2), row("state-all-2", 3)])
        state = _pay(sandbox, ledger, batch_id, tmp_path)

        assert state.is_completed()
        assert pay_result(state).counts.statuses == {"COMPLETED": 2}
        end = last_action(ledger, batch_id, FINISHED, FAILED)
        assert end is not None and end.action == FINISHED and "not paid" not in str(end.detail)


def test_a_run_whose_sandbox_ends_with_it_reads_the_correction_due_after_completion(
    prefect_api, make_sandbox, tmp_path
):
    # Issue 37: `payflow run` stops its embedded sandbox when the run returns, and the 6666
    # payout's correction (3 s after completion) never fired: the run, its report and the
    # ledger read COMPLETED for good, exit 0, of a payout the platform took back.
    sandbox = make_sandbox(correction_delay=3.0)
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        batch_id = register(ledger, [row("ends-ok", 2), row("ends-corrected", 3, last4="6666")])
        state = pay_state(
            sandbox, ledger, batch_id, tmp_path / "reports", sandbox_ends_with_run=True
        )

        result = pay_result(state)
        assert state.is_failed() and state.name == NOT_ALL_PAID
        assert result.corrections == 1 and not result.all_completed
        # Every payout was re-fetched after the moves: nothing left "not re-checked".
        assert result.not_rechecked == 0 and result.not_rechecked_line() is None
        [line] = [r for r in ledger.report_lines(batch_id) if r.row_number == 3]
        assert line.service_status == "FAILED"
