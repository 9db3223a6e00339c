"""Claiming rows, leases, taking over a crashed worker's rows, and the lease guard."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from decimal import Decimal

import pytest
from ledger_support import FakeClock, instruction, instructions, unique
from sqlalchemy import create_engine, text

from payflow.ledger import LeaseLost, Ledger, RowState


def _batch(ledger: Ledger, rows: int = 5) -> tuple[str, str]:
    batch, p = unique("b"), unique()
    ledger.register_batch(batch, "a.csv", instructions(p, rows), [])
    return batch, p


def test_claim_moves_validated_rows_to_submitting_once(ledger: Ledger, clock: FakeClock) -> None:
    batch, p = _batch(ledger, 5)
    first = ledger.claim_for_submit(batch, "w1", 3, lease_seconds=60)
    assert [c.external_id for c in first] == [f"{p}-2", f"{p}-3", f"{p}-4"]
    assert all(c.attempts == 1 and not c.needs_resolution and c.batch_id == batch for c in first)
    assert first[0].lease_until == clock.now + timedelta(seconds=60)
    second = ledger.claim_for_submit(batch, "w2", 3)
    assert [c.external_id for c in second] == [f"{p}-5", f"{p}-6"]
    assert ledger.claim_for_submit(batch, "w3", 3) == []
    assert ledger.batch_summary(batch) == {"SUBMITTING": 5}
    [event] = ledger.status_events(f"{p}-2")
    assert (event.from_state, event.to_state, event.source) == (
        RowState.VALIDATED,
        RowState.SUBMITTING,
        "submit",
    )


def test_a_claimed_row_carries_its_instruction_as_registered(ledger: Ledger) -> None:
    # Every field set, none equal to another: a field read from the wrong column shows.
    batch, p = unique("b"), unique()
    sent = instruction(f"{p}-2", 2)._replace(
        amount=Decimal("1234.50"),
        service_id=7,
        bank_name="bank-x",
        note="a note",
        user_email="x@example.com",
        user_phone="79001112233",
        user_ip="10.0.0.1",
        callback_url="https://cb.example/p",
    )
    assert all(value is not None for value in sent)
    ledger.register_batch(batch, "a.csv", [sent], [])
    [claimed] = ledger.claim_for_submit(batch, "w1", 5)
    assert claimed.instruction == sent
    assert ledger.payout_instruction(sent.external_id) == sent
    assert ledger.payout_instruction(f"{p}-none") is None


def test_an_expired_lease_is_taken_over_and_needs_resolution(
    ledger: Ledger, clock: FakeClock
) -> None:
    batch, p = _batch(ledger, 4)
    crashed = ledger.claim_for_submit(batch, "w1", 2, lease_seconds=30)
    clock.advance(29)
    assert ledger.claim_for_resolution(batch, "w2", 10) == []
    clock.advance(1)
    taken = ledger.claim_for_submit(batch, "w2", 10)
    # Only the crashed rows: nothing new is sent until they are resolved.
    assert [c.external_id for c in taken] == [c.external_id for c in crashed]
    assert all(c.needs_resolution and c.attempts == 1 for c in taken)
    events = ledger.status_events(f"{p}-2")
    assert events[-1].source == "resolve" and "w1" in (events[-1].status_message or "")
    # The old worker lost its lease: its verdicts are refused, the new holder's accepted.
    with pytest.raises(LeaseLost):
        ledger.mark_submit_rejected(f"{p}-2", "400 bad request", worker_id="w1")
    with pytest.raises(LeaseLost):
        ledger.release_for_retry(f"{p}-2", worker_id="w1")
    assert ledger.release_for_retry(f"{p}-2", worker_id="w2")
    fresh = ledger.claim_for_submit(batch, "w2", 10)
    assert sorted(c.external_id for c in fresh) == [f"{p}-2", f"{p}-4", f"{p}-5"]
    assert {c.external_id: c.attempts for c in fresh}[f"{p}-2"] == 2
    assert not any(c.needs_resolution for c in fresh)


def test_release_stale_leases_of_one_worker_or_all(ledger: Ledger) -> None:
    batch, _ = _batch(ledger, 4)
    ledger.claim_for_submit(batch, "w1", 2)
    ledger.claim_for_submit(batch, "w2", 2)
    assert ledger.claim_for_resolution(batch, "w1", 10) == []  # leases still running
    assert ledger.release_stale_leases(batch, "w1") == 2
    mine = ledger.claim_for_resolution(batch, "w1", 10)
    assert len(mine) == 2 and all(c.needs_resolution for c in mine)
    assert ledger.release_stale_leases(batch) == 4
    assert len(ledger.claim_for_submit(batch, "solo", 10)) == 4
    assert ledger.release_stale_leases(unique("b")) == 0


def test_claim_limit_must_be_positive(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="limit"):
        ledger.claim_for_submit(unique("b"), "w", 0)


def test_polling_schedule_and_unfinished(ledger: Ledger, clock: FakeClock) -> None:
    batch, p = _batch(ledger, 4)
    ledger.claim_for_submit(batch, "w", 3)
    ledger.mark_created(f"{p}-2", unique("pay"), "CREATED")
    ledger.mark_created(f"{p}-3", unique("pay"), "PROCESSING")
    ledger.mark_created(f"{p}-4", unique("pay"), "COMPLETED")
    due = ledger.payouts_to_poll(batch, clock.now, 10)
    assert sorted(r.external_id for r in due) == [f"{p}-2", f"{p}-3"]
    assert all(r.payout_id and r.last_status_at == clock.now for r in due)
    ledger.schedule_poll(f"{p}-2", clock.now + timedelta(seconds=5))
    ledger.schedule_poll(f"{p}-4", clock.now)  # final: never polled again
    assert [r.external_id for r in ledger.payouts_to_poll(batch, clock.now, 10)] == [f"{p}-3"]
    later = ledger.payouts_to_poll(batch, clock.now + timedelta(seconds=5), 10)
    assert sorted(r.external_id for r in later) == [f"{p}-2", f"{p}-3"]
    assert len(ledger.payouts_to_poll(batch, clock.now + timedelta(seconds=5), 1)) == 1
    states = {r.external_id: r.state for r in ledger.unfinished(batch)}
    assert states == {
        f"{p}-2": RowState.CREATED,
        f"{p}-3": RowState.PROCESSING,
        f"{p}-5": RowState.VALIDATED,
    }


def test_due_polls_are_taken_page_by_page(ledger: Ledger, clock: FakeClock) -> None:
    # Two trackers of one batch (two pay runs): each takes its own page of due payouts, which
    # is due again after the hold, or when the taker writes the next poll it decided on.
    batch, p = _batch(ledger, 5)
    ledger.claim_for_submit(batch, "w", 5)
    for row in range(2, 6):
        ledger.mark_created(f"{p}-{row}", unique("pay"), "CREATED")
    ledger.mark_created(f"{p}-6", unique("pay"), "COMPLETED")
    hold = timedelta(seconds=60)
    first = ledger.take_polls_due(batch, clock.now, 2, hold)
    second = ledger.take_polls_due(batch, clock.now, 2, hold)
    assert ledger.take_polls_due(batch, clock.now, 2, hold) == []
    taken = [r.external_id for r in first + second]
    assert sorted(taken) == [f"{p}-{row}" for row in range(2, 6)]
    assert all(r.last_status_at == clock.now and r.next_poll_at == clock.now for r in first)
    assert ledger.payouts_to_poll(batch, clock.now + hold - timedelta(seconds=1), 10) == []
    ledger.schedule_polls([(first[0].external_id, clock.now + timedelta(seconds=2))])
    soon = ledger.payouts_to_poll(batch, clock.now + timedelta(seconds=2), 10)
    assert [r.external_id for r in soon] == [first[0].external_id]
    assert len(ledger.payouts_to_poll(batch, clock.now + hold, 10)) == 4


def test_a_take_with_nothing_due_takes_no_write_lock(tmp_path, clock: FakeClock) -> None:
    # A tracker looks every half second; with webhooks bringing the news nothing is due, and a
    # write transaction each time would queue behind (and hold up) the receiver's commits.
    url = f"sqlite:///{tmp_path / 'l.db'}"
    with Ledger.open(url, clock=clock) as ledger:
        batch, p = _batch(ledger, 2)
        ledger.claim_for_submit(batch, "w", 2)
        for row in range(2, 4):
            ledger.mark_created(f"{p}-{row}", unique("pay"), "CREATED")
        ledger.schedule_polls([(f"{p}-{row}", clock.now + timedelta(hours=1)) for row in (2, 3)])
        writer = sqlite3.connect(tmp_path / "l.db", isolation_level=None)
        try:
            writer.execute("BEGIN IMMEDIATE")  # another process holding the write lock
            with ThreadPoolExecutor(1) as pool:  # a take that waited for it would time out
                taking = pool.submit(
                    ledger.take_polls_due, batch, clock.now, 10, timedelta(seconds=60)
                )
                assert taking.result(timeout=10) == []
        finally:
            writer.execute("ROLLBACK")
            writer.close()


@pytest.mark.postgres
def test_a_take_of_due_polls_skips_rows_another_transaction_holds(
    postgres_url: str, clock: FakeClock
) -> None:
    with Ledger.open(postgres_url, clock=clock) as ledger:
        batch, p = _batch(ledger, 3)
        ledger.claim_for_submit(batch, "w", 3)
        for row in range(2, 5):
            ledger.mark_created(f"{p}-{row}", unique("pay"), "CREATED")
        engine = create_engine(postgres_url)
        try:
            with engine.begin() as holder:  # the receiver recording a webhook of p-2, say
                holder.execute(
                    text("SELECT id FROM payouts WHERE external_id = :e FOR UPDATE"),
                    {"e": f"{p}-2"},
                )
                with ThreadPoolExecutor(1) as pool:  # a take that waited would time out here
                    taking = pool.submit(
                        ledger.take_polls_due, batch, clock.now, 10, timedelta(seconds=60)
                    )
                    taken = taking.result(timeout=10)
        finally:
            engine.dispose()
    assert sorted(r.external_id for r in taken) == [f"{p}-3", f"{p}-4"]


def test_lease_holders_names_the_workers_with_submitting_rows(tmp_path):
    with Ledger.open(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        ledger.register_batch("b1", "f.csv", instructions("lh", 6), [])
        assert ledger.lease_holders("b1") == set()
        ledger.claim_for_submit("b1", "w1", 2)
        ledger.claim_for_submit("b1", "w2", 3)
        assert ledger.lease_holders("b1") == {"w1", "w2"}
        assert ledger.release_stale_leases("b1", "w1") == 2
        # Released leases still name their holder until another worker claims the rows.
        claimed = ledger.claim_for_submit("b1", "w3", 10)
        assert {c.external_id for c in claimed if c.needs_resolution} and "w1" not in (
            ledger.lease_holders("b1")
        )
