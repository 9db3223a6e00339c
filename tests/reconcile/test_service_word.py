"""The service's latest word, kept per payout, decides every row's outcome (design invariant 9):
payouts the platform moved after the fact read as the service says in the report's rows and
totals, the rerun candidates and the failure groups, and no next step pays a person twice.

Each test runs against a real sandbox whose test route moves payouts after they finished."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from openpyxl import load_workbook
from reconcile_support import instruction, move, new_id, pay, payout_id, reconcile, register

from payflow.ledger import EventSource, IllegalTransition, Ledger, RowOutcome
from payflow.reconcile import FailureClasses
from payflow.reporting import write_batch_report
from payflow.reporting.layout import classification
from payflow.rerun import classifier, find_candidates
from payflow.sandbox import SandboxServer


def _sandbox_completed(server: SandboxServer, external_ids: set[str]) -> dict[str, Decimal]:
    """The sandbox's own total of COMPLETED payouts per currency, for these externalIds."""
    stats = httpx.get(f"{server.url}/_sandbox/stats", timeout=10).json()
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for payout in stats["payouts"]:
        if payout["externalId"] in external_ids and payout["status"] == "COMPLETED":
            totals[payout["currency"]] += Decimal(str(payout["amount"]))
    return dict(totals)


def _xlsx_figures(path: Path, figure: str) -> dict[str, Decimal]:
    """One figure of the summary sheet's per-currency block, per currency."""
    lines = list(load_workbook(path)["summary"].iter_rows(values_only=True))
    start = next(i for i, line in enumerate(lines) if line[0] == "currency")
    currencies = [str(c) for c in lines[start][1:] if c]
    line = next(line for line in lines[start:] if line[0] == figure)
    return {c: Decimal(str(v)) for c, v in zip(currencies, line[1:], strict=False) if v}


async def _moved_batch(client, ledger: Ledger, server: SandboxServer) -> tuple[str, set[str]]:
    """A batch in two currencies, paid, whose payouts the platform then moved every way."""
    rows = [
        instruction(new_id("w"), 2, "0001"),  # COMPLETED, then CANCELED
        instruction(new_id("w"), 3, "1111"),  # FAILED, then COMPLETED
        instruction(new_id("w"), 4, "0001"),  # COMPLETED, then PROCESSING again
        instruction(new_id("w"), 5, "0001"),  # COMPLETED, its amount changed
        instruction(new_id("w"), 6, "0001"),  # COMPLETED, left alone
        instruction(new_id("w"), 7, "0001", currency="GHS", amount=Decimal(1500)),
        instruction(new_id("w"), 8, "0001", currency="GHS", amount=Decimal(99)),
        instruction(new_id("w"), 9, "2222", currency="GHS", amount=Decimal(10)),  # FAILED
    ]
    batch = register(ledger, rows)
    await pay(client, ledger, batch)
    move(server, payout_id(ledger, batch, 2), status="CANCELED")
    move(server, payout_id(ledger, batch, 3), status="COMPLETED")
    move(server, payout_id(ledger, batch, 4), status="PROCESSING")
    move(server, payout_id(ledger, batch, 5), amount="24.5")
    move(server, payout_id(ledger, batch, 7), status="FAILED", statusMessage="reversed")
    await reconcile(client, ledger, batch)
    return batch, {row.external_id for row in rows}


async def test_outcomes_and_xlsx_totals_follow_the_service_after_moves(
    client, ledger: Ledger, sandbox_server: SandboxServer, tmp_path: Path
) -> None:
    batch, ids = await _moved_batch(client, ledger, sandbox_server)
    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)
    service = _sandbox_completed(sandbox_server, ids)
    assert service == {"XOF": Decimal(15 + Decimal("24.5") + 30), "GHS": Decimal(99)}
    assert _xlsx_figures(report.xlsx, "paid_amount") == service
    assert _xlsx_figures(report.xlsx, "paid_rows") == {"XOF": 3, "GHS": 1}
    assert _xlsx_figures(report.xlsx, "service_completed_amount") == service
    outcomes = {line.row_number: line.outcome.value for line in ledger.report_lines(batch)}
    assert outcomes == {
        2: "not paid (corrected after completion)",  # the ledger cannot follow to CANCELED
        3: "paid (corrected from failed)",  # the ledger holds FAILED: it cannot follow
        4: "pending at the service",
        5: "paid",
        6: "paid",
        7: "not paid (corrected after completion)",
        8: "paid",
        9: "failed",
    }
    # The failed rows by statusMessage: the row the service paid is not among them.
    failed = {(g.total.currency, g.total.rows) for g in report.summary.failures}
    assert failed == {("GHS", 1)}


async def test_a_row_the_service_paid_is_never_offered_for_a_rerun(
    client, ledger: Ledger, sandbox_server: SandboxServer
) -> None:
    batch, _ = await _moved_batch(client, ledger, sandbox_server)
    # Acknowledged findings no longer hold the rows back: only the service's word does.
    for finding in ledger.findings(batch):
        ledger.acknowledge_finding(batch, finding.id, actor="ops", note="seen")
    candidates = find_candidates(ledger, batch, classifier())
    assert sorted(c.row_number for c in candidates.eligible) == [7, 9]
    why = {i.row_number: i.reason for i in candidates.ineligible}
    assert "the service paid it" in why[3]
    assert "pending at the service" in why[4]
    assert "not paid" in why[2] and "COMPLETED: it was paid" not in why[2]


async def test_no_next_step_pays_twice(client, ledger: Ledger, sandbox_server) -> None:
    batch, _ = await _moved_batch(client, ledger, sandbox_server)
    classes = FailureClasses.load()
    steps = {line.row_number: classification(line, classes) for line in ledger.report_lines(batch)}
    paid_after_failure = steps[3]
    assert paid_after_failure is not None
    assert "Never rerun" in paid_after_failure.next_step
    reversed_after_completion = steps[2]
    assert reversed_after_completion is not None
    assert "payflow rerun` cannot send it" in reversed_after_completion.next_step
    # Pending at the service, and paid another amount: each says to wait or ask, never to pay.
    pending, other_amount = steps[4], steps[5]
    assert pending is not None and "Wait" in pending.next_step
    assert "do not rerun it" in pending.next_step
    assert other_amount is not None and "24.5" in other_amount.next_step
    assert "never rerun" in other_amount.next_step
    assert steps[6] is None and steps[8] is None


async def test_a_derived_id_conflict_whose_payout_was_paid_is_never_told_to_get_a_new_id(
    client, ledger: Ledger
) -> None:
    # A file without ids: the id is derived from requisites, amount and currency, not the name.
    derived = f"pf-{new_id('d')}-1"
    first = register(ledger, [instruction(derived, 2, "0001", name="Awa Kone")])
    await pay(client, ledger, first)
    again = register(ledger, [instruction(derived, 2, "0001", name="Awa Koné")])
    [line] = list(ledger.report_lines(again))
    found = classification(line, FailureClasses.load())
    assert found is not None
    assert "own externalId" not in found.next_step.replace("new externalId", "")
    assert "Already paid" in found.next_step and first in found.next_step


def test_a_correction_heard_by_webhook_is_the_rows_word(tmp_path: Path) -> None:
    """The ledger cannot record FAILED -> COMPLETED; the service's word is kept all the same,
    with the channel it came by, and the row reads paid."""
    with Ledger.open(f"sqlite:///{tmp_path / 'l.sqlite3'}") as ledger:
        row = instruction("hook-1", 2, "1111")
        ledger.register_batch("b", "f.csv", [row], [])
        [claimed] = ledger.claim_for_submit("b", "w", 10)
        ledger.mark_created("hook-1", "p-1", "FAILED")
        with pytest.raises(IllegalTransition):
            ledger.record_status(
                external_id="hook-1",
                payout_id="p-1",
                status="COMPLETED",
                status_message=None,
                source=EventSource.WEBHOOK,
                amount=Decimal(10),
            )
        [line] = list(ledger.report_lines("b"))
        assert (line.outcome, line.service_status, line.service_source) == (
            RowOutcome.PAID_CORRECTED,
            "COMPLETED",
            "webhook",
        )
        assert claimed.instruction.external_id == "hook-1"


async def test_each_report_that_says_something_new_is_kept_as_a_version(
    client, ledger: Ledger, sandbox_server: SandboxServer, tmp_path: Path
) -> None:
    # Found by hand: each reconcile replaced <batch>-reconciliation.{csv,xlsx}, and the report
    # an operator reviewed before acknowledging a finding was gone.
    rows = [instruction(new_id("v"), 2, "0001"), instruction(new_id("v"), 3, "0001")]
    batch = register(ledger, rows)
    await pay(client, ledger, batch)
    await reconcile(client, ledger, batch)
    first = write_batch_report(ledger, batch, tmp_path, sandbox=True, made_by="ops")
    assert first.version is not None and first.version.changes == "first version"
    move(sandbox_server, payout_id(ledger, batch, 2), status="CANCELED")
    await reconcile(client, ledger, batch)
    second = write_batch_report(ledger, batch, tmp_path, sandbox=True, made_by="ana")
    assert second.version is not None
    assert "XOF paid 2 -> 1" in second.version.changes
    assert "open findings 0 -> 1" in second.version.changes
    # Written again with nothing new (a download): the latest files only, no version.
    assert write_batch_report(ledger, batch, tmp_path, sandbox=True).version is None

    kept = ledger.report_versions(batch)
    assert [(v.made_by, v.id) for v in kept] == [
        ("ana", second.version.id),
        ("ops", first.version.id),
    ]
    first_rows = Path(first.version.csv_path).read_text(encoding="utf-8-sig")
    assert "not paid (corrected after completion)" not in first_rows
    assert "not paid (corrected after completion)" in second.csv.read_text(encoding="utf-8-sig")
    assert second.csv.name == f"{batch}-reconciliation.csv"
    assert Path(second.version.xlsx_path).name.startswith(f"{batch}-reconciliation-")


def test_a_later_move_of_the_ledger_outranks_an_older_word(tmp_path: Path) -> None:
    """A poll's word (PROCESSING) followed by a lookup adopting the finished payout: the newer
    news is the ledger's, and the row is paid, not "pending at the service"."""
    moments = iter(datetime(2026, 11, 29, 6, 0, second, tzinfo=UTC) for second in range(0, 60))
    with Ledger.open(f"sqlite:///{tmp_path / 'l.sqlite3'}", clock=lambda: next(moments)) as led:
        led.register_batch("b", "f.csv", [instruction("late-1", 2, "0001")], [])
        led.claim_for_submit("b", "w", 10)
        led.record_status(
            external_id="late-1",
            payout_id="p-1",
            status="PROCESSING",
            status_message=None,
            source=EventSource.POLL,
        )
        led.mark_created("late-1", "p-1", "COMPLETED", source=EventSource.RESOLVE)
        [line] = list(led.report_lines("b"))
        assert (line.state, line.outcome) == ("COMPLETED", RowOutcome.PAID)
