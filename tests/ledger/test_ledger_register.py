"""Registering batches: NEW, ALREADY_KNOWN, CONFLICT, REJECTED, idempotency, exact amounts."""

from __future__ import annotations

from decimal import Decimal

import pytest
from ledger_support import FakeClock, instruction, instructions, unique
from sqlalchemy import create_engine, select

from payflow.ledger import Disposition, Ledger, RejectedRow, RowState
from payflow.ledger.tables import Payout


def test_new_rows_become_validated_payouts_and_rejects_are_kept(ledger: Ledger) -> None:
    batch, p = unique("b"), unique()
    valid = instructions(p, 3)
    rejected = [RejectedRow(5, f"{p}-5", ["row 5, column amount: must be a number"])]
    outcome = ledger.register_batch(batch, "payouts.csv", valid, rejected)
    assert (outcome.new, outcome.rejected, outcome.already_registered) == (3, 1, 0)
    assert outcome.already_known == [] and outcome.conflicts == []
    assert ledger.batch_exists(batch) and not ledger.batch_exists(unique("b"))
    assert ledger.batch_summary(batch) == {"VALIDATED": 3, "REJECTED": 1}
    rows = list(ledger.batch_rows(batch))
    assert [r.row_number for r in rows] == [2, 3, 4, 5]
    assert [r.disposition for r in rows] == [Disposition.NEW] * 3 + [Disposition.REJECTED]
    assert rows[0].requisites == valid[0].requisites and rows[0].amount == Decimal(10)
    assert rows[3].state is RowState.REJECTED and rows[3].amount is None
    assert rows[3].reasons == ["row 5, column amount: must be a number"]


def test_registering_the_same_batch_again_changes_nothing(ledger: Ledger) -> None:
    batch, p = unique("b"), unique()
    valid, rejected = instructions(p, 4), [RejectedRow(9, None, ["bad"])]
    ledger.register_batch(batch, "a.csv", valid, rejected)
    before = list(ledger.batch_rows(batch))
    again = ledger.register_batch(batch, "a.csv", valid, rejected)
    assert (again.new, again.rejected, again.already_registered) == (0, 0, 5)
    assert again.already_known == [] and again.conflicts == []
    assert list(ledger.batch_rows(batch)) == before


def test_a_batch_cut_short_is_completed_by_registering_it_again(ledger: Ledger) -> None:
    batch, p = unique("b"), unique()
    valid = instructions(p, 6)
    ledger.register_batch(batch, "a.csv", valid[:2], [])  # as if the first run died early
    outcome = ledger.register_batch(batch, "a.csv", valid, [])
    assert (outcome.new, outcome.already_registered) == (4, 2)
    assert ledger.batch_summary(batch) == {"VALIDATED": 6}


def test_same_external_id_same_content_in_a_new_batch_is_already_known(ledger: Ledger) -> None:
    first, second, p = unique("b"), unique("b"), unique()
    valid = instructions(p, 2)
    ledger.register_batch(first, "a.csv", valid, [])
    claimed = ledger.claim_for_submit(first, "w1", 1)
    ledger.mark_created(claimed[0].external_id, unique("pay"), "CREATED")
    outcome = ledger.register_batch(second, "copy.csv", valid, [])
    assert outcome.new == 0 and outcome.conflicts == []
    assert [(k.external_id, k.state, k.first_batch_id) for k in outcome.already_known] == [
        (f"{p}-2", RowState.CREATED, first),
        (f"{p}-3", RowState.VALIDATED, first),
    ]
    views = list(ledger.batch_rows(second))
    assert {v.disposition for v in views} == {Disposition.ALREADY_KNOWN}
    assert views[0].first_batch_id == first and views[0].state is RowState.CREATED
    assert ledger.batch_summary(second) == {"CREATED": 1, "VALIDATED": 1}


def test_an_already_known_row_nobody_sent_is_sent_once(ledger: Ledger) -> None:
    first, second, p = unique("b"), unique("b"), unique()
    valid = instructions(p, 3)
    ledger.register_batch(first, "a.csv", valid, [])
    ledger.register_batch(second, "copy.csv", valid, [])
    by_second = ledger.claim_for_submit(second, "w2", 10)
    assert sorted(c.external_id for c in by_second) == sorted(i.external_id for i in valid)
    assert ledger.claim_for_submit(first, "w1", 10) == []
    assert all(c.attempts == 1 for c in by_second)


def test_same_external_id_other_content_is_a_conflict_never_paid(ledger: Ledger) -> None:
    first, second, p = unique("b"), unique("b"), unique()
    ledger.register_batch(first, "a.csv", [instruction(f"{p}-1", 2, "100.00")], [])
    changed = instruction(f"{p}-1", 7, "120.00", requisites="22599999999")
    outcome = ledger.register_batch(second, "b.csv", [changed], [])
    assert outcome.new == 0 and outcome.already_known == []
    [conflict] = outcome.conflicts
    assert conflict.row_number == 7 and conflict.external_id == f"{p}-1"
    assert "amount (120.00 here, 100.00 before)" in conflict.reason
    assert "requisites" in conflict.reason and "22599999999" not in conflict.reason
    assert first in conflict.reason
    assert ledger.batch_summary(second) == {"CONFLICT": 1}
    [view] = ledger.batch_rows(second)
    assert view.state is RowState.CONFLICT and view.amount is None and view.payout_id is None
    assert view.reasons == [conflict.reason]
    assert ledger.claim_for_submit(second, "w", 10) == []
    ledger.claim_for_submit(first, "w", 10)  # the original is still paid, once
    assert ledger.claim_for_submit(first, "w", 10) == []


def test_duplicate_external_ids_inside_one_file(ledger: Ledger) -> None:
    batch, p = unique("b"), unique()
    rows = [
        instruction(f"{p}-a", 2),
        instruction(f"{p}-a", 2)._replace(row_number=3),  # same content, another row
        instruction(f"{p}-a", 4, amount="999"),
    ]
    outcome = ledger.register_batch(batch, "dup.csv", rows, [])
    assert outcome.new == 1
    assert [k.row_number for k in outcome.already_known] == [3]
    assert [c.row_number for c in outcome.conflicts] == [4]
    assert len(ledger.claim_for_submit(batch, "w", 10)) == 1


def test_repeated_row_numbers_are_a_caller_error(ledger: Ledger) -> None:
    p = unique()
    with pytest.raises(ValueError, match="row number"):
        ledger.register_batch(unique("b"), "x.csv", instructions(p, 1), [RejectedRow(2, None, [])])


@pytest.mark.parametrize(
    "amount", ["12345678901234.56", "0.10", "0.01", "99999999.99", "5", "1E+3", "0.000001"]
)
def test_amounts_round_trip_exactly(ledger: Ledger, amount: str) -> None:
    batch, p = unique("b"), unique()
    ledger.register_batch(batch, "a.csv", [instruction(f"{p}-1", 2, amount)], [])
    [view] = ledger.batch_rows(batch)
    # Exact value and scale: 0.10 stays 0.10, not 0.1 (and never a float).
    assert view.amount == Decimal(amount)
    assert format(view.amount, "f") == format(Decimal(amount), "f")
    [claimed] = ledger.claim_for_submit(batch, "w", 1)
    assert isinstance(claimed.instruction.amount, Decimal)
    assert claimed.instruction == instruction(f"{p}-1", 2, amount)


def test_several_chunks_register_every_row(sqlite_url: str) -> None:
    from payflow.ledger import register

    with Ledger.open(sqlite_url) as ledger:
        p = unique()
        valid = instructions(p, 2 * register.CHUNK_ROWS + 17)
        repeat = [valid[0]._replace(row_number=10**6)]  # a duplicate in the last chunk
        outcome = ledger.register_batch("big", "big.csv", valid + repeat, [])
        assert outcome.new == len(valid) and len(outcome.already_known) == 1
        assert ledger.batch_summary("big") == {"VALIDATED": len(valid) + 1}


def test_bulk_written_times_compare_like_any_other(ledger: Ledger, clock: FakeClock) -> None:
    # Rows are inserted past SQLAlchemy's type handling; their times must still be stored the
    # way a query binds them, or time comparisons on SQLite silently go wrong.
    batch, p = unique("b"), unique()
    ledger.register_batch(batch, "a.csv", instructions(p, 2), [])
    engine = create_engine(ledger.url)
    try:
        with engine.connect() as connection:
            found = connection.scalars(
                select(Payout.external_id).where(
                    Payout.batch_id == batch, Payout.created_at == clock.now
                )
            ).all()
            stored = connection.scalars(
                select(Payout.created_at).where(Payout.batch_id == batch)
            ).all()
    finally:
        engine.dispose()
    assert sorted(found) == [f"{p}-2", f"{p}-3"]
    assert stored == [clock.now, clock.now]


def test_a_batch_records_the_sheet_it_was_read_from(ledger: Ledger) -> None:
    batch = unique("sheet")
    ledger.register_batch(batch, "months.xlsx", instructions(batch, 1), [], sheet="March")
    header = ledger.batch_header(batch)
    assert header is not None and header.sheet == "March"
    assert header.source == "months.xlsx, sheet March"
    # Every batch, not the newest five: other test files register batches in the same
    # PostgreSQL ledger at the same time, and pushed this one out of the five (a full run).
    everyone = ledger.newest_batches(ledger.batch_count() + 1000)
    assert [h.source for h in everyone if h.batch_id == batch] == [header.source]

    # A CSV has no sheet; a batch registered before the ledger recorded sheets learns its
    # sheet when the same sheet is registered again.
    csv = unique("csv")
    ledger.register_batch(csv, "plain.csv", instructions(csv, 1), [])
    before = ledger.batch_header(csv)
    assert before is not None and before.sheet is None and before.source == "plain.csv"
    ledger.register_batch(csv, "plain.csv", instructions(csv, 1), [], sheet="Sheet1")
    after = ledger.batch_header(csv)
    assert after is not None and after.source == "plain.csv, sheet Sheet1"
    assert ledger.batch_header("no-such-batch") is None
