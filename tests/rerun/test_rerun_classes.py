"""A rerun classifies failed rows by the reconciliation report's own table, never a second one."""

from __future__ import annotations

from pathlib import Path

import pytest
from paying_support import register, row

from payflow.reconcile import FailureClasses, FailureTableError
from payflow.rerun import Selection, choose, classifier, find_candidates, preview_lines

REVERSED = "Corrected by the platform after a bank-side error"


def _failed_batch(ledger, message: str) -> str:
    batch_id = register(ledger, [row("cls-2", 2, last4="2222")])
    ledger.claim_for_submit(batch_id, "w", 10)
    ledger.mark_created("cls-2", "p-2", "FAILED", message)
    return batch_id


def test_a_platform_reversal_gets_the_reports_class_and_next_step(ledger):
    batch_id = _failed_batch(ledger, REVERSED)

    [candidate] = find_candidates(ledger, batch_id, classifier()).eligible

    in_report = FailureClasses.load().classify("FAILED", REVERSED)
    assert (candidate.failure_class, candidate.next_step) == (
        in_report.failure_class,
        in_report.next_step,
    )
    # The table says to ask before sending money that already came back once.
    assert candidate.failure_class == "unknown" and "ask the manager" in candidate.next_step


def test_an_operators_own_table_decides_the_rerun_class(ledger, tmp_path: Path):
    table = tmp_path / "classes.csv"
    table.write_text(
        "status,message_pattern,class,next_step\n"
        "FAILED,bank-side,retryable,Send it again.\n"
        "*,,unknown,Decide by hand.\n",
        encoding="utf-8",
    )
    batch_id = _failed_batch(ledger, REVERSED)

    [candidate] = find_candidates(ledger, batch_id, classifier(table)).eligible

    assert (candidate.failure_class, candidate.next_step) == ("retryable", "Send it again.")


def test_a_broken_table_is_refused_with_its_line(tmp_path: Path):
    table = tmp_path / "classes.csv"
    table.write_text("status,message_pattern,class,next_step\nFAILED,,maybe,x\n", "utf-8")

    with pytest.raises(FailureTableError, match="line 2"):
        classifier(table)


def test_a_preview_without_a_choice_says_nothing_is_chosen_and_how_to_choose(ledger):
    batch_id = _failed_batch(ledger, "Recipient not found")
    candidates = find_candidates(ledger, batch_id, classifier())

    def preview(selection: Selection) -> list[str]:
        return preview_lines(candidates, choose(candidates, selection), selection)

    unchosen = preview(Selection())
    assert unchosen[0] == f"batch {batch_id}: 1 row can be sent again; none is chosen yet"
    assert unchosen[-1].startswith("nothing was sent; choose rows with --rows")

    chosen = preview(Selection(rows=(2,)))
    assert chosen[0] == f"batch {batch_id}: 1 row would be sent again"
    assert chosen[-1] == "nothing was sent; add --reviewed to send them"

    unmatched = preview(Selection(message="Insufficient funds"))
    assert unmatched[0] == f"batch {batch_id}: 0 rows would be sent again"
    assert unmatched[-1] == "nothing was sent; no row that can be sent again matches the choice"
