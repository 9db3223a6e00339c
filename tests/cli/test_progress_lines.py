"""Outside a terminal a run logs one progress line per interval, read from the ledger."""

from __future__ import annotations

import threading
from decimal import Decimal

from payflow.cli.progress import LedgerProgress
from payflow.ledger import Ledger
from payflow.model import PayoutInstruction
from payflow.progress_line import Throttled, progress_text, reconcile_progress


def _row(n: int) -> PayoutInstruction:
    return PayoutInstruction(
        row_number=n + 1,
        external_id=f"pl-{n}",
        amount=Decimal(5),
        currency="XOF",
        payment_type="SIM",
        requisites=f"22507{n:08d}",
        name="Awa",
        user_id=f"u{n}",
        service_id=None,
        bank_name=None,
        note=None,
        user_email=None,
        user_phone=None,
        user_ip=None,
        callback_url=None,
    )


def test_progress_lines_say_sent_final_and_pending(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    lines: list[str] = []
    seen_two = threading.Event()

    def emit(line: str) -> None:
        lines.append(line)
        if len(lines) >= 2:
            seen_two.set()

    with Ledger.open(url) as ledger:
        ledger.register_batch("b1", "f.csv", [_row(1), _row(2), _row(3)], [])
        (row,) = ledger.claim_for_submit("b1", "w", limit=1)
        ledger.mark_created(row.external_id, "p1", "PROCESSING")
        with LedgerProgress(url, "b1", 3, live=False, every=0.05, emit=emit):
            assert seen_two.wait(30), lines
    assert lines[0] == "batch b1: 1 row sent, 0 final, 1 pending, 2 to send (of 3)"


def test_throttled_emits_at_most_once_per_interval():
    now = [0.0]
    out: list[str] = []
    line = Throttled(out.append, every=10.0, clock=lambda: now[0])
    for t in (0.0, 5.0, 9.9, 10.0, 19.0, 20.5):
        now[0] = t
        line(lambda: f"at {now[0]}")
    assert out == ["at 0.0", "at 10.0", "at 20.5"]


def test_progress_text_counts_groups_of_states():
    counts = {
        "COMPLETED": 3,
        "FAILED": 1,
        "PROCESSING": 2,
        "SUBMITTING": 1,
        "VALIDATED": 4,
        "REJECTED": 1,
    }
    assert progress_text("b", counts) == (
        "batch b: 6 rows sent, 4 final, 3 pending, 4 to send, 1 rejected (of 12)"
    )
    del counts["VALIDATED"], counts["REJECTED"]
    assert progress_text("b", counts) == "batch b: 6 rows sent, 4 final, 3 pending (of 7)"
    counts["HELD"] = 2
    assert progress_text("b", counts) == "batch b: 6 rows sent, 4 final, 3 pending, 2 held (of 9)"


def test_rows_refused_in_the_file_are_named_not_counted_final():
    # A batch with 3 rejected rows read "0 rows sent, 3 final" before anything was sent.
    assert progress_text("b", {"VALIDATED": 2, "REJECTED": 3}) == (
        "batch b: 0 rows sent, 0 final, 0 pending, 2 to send, 3 rejected (of 5)"
    )
    counts = {"COMPLETED": 1, "SUBMIT_REJECTED": 1, "REJECTED": 3, "CONFLICT": 1}
    assert progress_text("b", counts) == (
        "batch b: 2 rows sent, 2 final, 0 pending, 3 rejected, 1 refused as conflicts (of 6)"
    )


def test_a_quiet_first_line_waits_one_interval():
    # A reconciliation's progress: a short one prints no line at all.
    now = [100.0]
    out: list[str] = []
    line = Throttled(out.append, every=10.0, clock=lambda: now[0], quiet_first=True)
    for t in (100.0, 109.9, 110.0, 115.0, 120.5):
        now[0] = t
        line(lambda: f"at {now[0]}")
    assert out == ["at 110.0", "at 120.5"]


def test_a_reconciliation_says_how_many_of_the_batch_rows_are_done():
    out: list[str] = []
    progress = reconcile_progress("b1", out.append, every=0.0)
    progress(20_000, 100_000)
    assert out == ["batch b1: 20000 of 100000 rows reconciled with the service"]
