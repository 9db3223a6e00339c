"""Two runs tracking one batch on PostgreSQL write the same payouts in one transaction each, in
opposite orders; they must take turns, never deadlock (a pay run failed on one once)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from ledger_support import instructions, unique
from sqlalchemy.exc import OperationalError

from payflow.ledger import CreatedPayout, EventSource, Ledger, StatusUpdate, moves

ROWS = 300
ROUNDS = 6


class _Deadlock(Exception):
    sqlstate = "40P01"


def _processing_batch(url: str) -> list[str]:
    batch, p = unique("b"), unique()
    with Ledger.open(url) as ledger:
        ledger.register_batch(batch, "a.csv", instructions(p, ROWS), [])
        claimed = ledger.claim_for_submit(batch, "w", ROWS)
        outcome = ledger.mark_created_many(
            [CreatedPayout(c.external_id, unique("pay"), "PROCESSING") for c in claimed]
        )
        assert outcome.moved == ROWS
    return sorted(c.external_id for c in claimed)


@pytest.mark.postgres
def test_two_trackers_writing_in_opposite_orders_take_turns(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No second attempt: only the order the rows are locked in can keep this from failing.
    monkeypatch.setattr(moves, "DEADLOCK_ATTEMPTS", 1)
    ids = _processing_batch(postgres_url)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []
    when = datetime.now(UTC) + timedelta(minutes=5)

    def track(order: list[str]) -> None:
        with Ledger.open(postgres_url) as ledger:
            for _ in range(ROUNDS):
                barrier.wait(timeout=60)
                try:
                    ledger.schedule_polls([(ext, when) for ext in order])
                    polled = [
                        StatusUpdate("PROCESSING", None, EventSource.POLL, external_id=ext)
                        for ext in order
                    ]
                    assert ledger.record_statuses(polled) == [False] * len(order)
                except BaseException as exc:  # a thread cannot fail the test: the main thread does
                    errors.append(exc)

    threads = [
        threading.Thread(target=track, args=(ids,)),
        threading.Thread(target=track, args=(ids[::-1],)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []


def test_a_transaction_aborted_as_a_deadlock_runs_again() -> None:
    calls: list[int] = []

    @moves.retry_rolled_back
    def write() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("UPDATE payouts", {}, _Deadlock())
        return "written"

    assert write() == "written"
    assert len(calls) == 3


def test_other_database_errors_are_not_run_again() -> None:
    calls: list[int] = []

    @moves.retry_rolled_back
    def write() -> None:
        calls.append(1)
        raise OperationalError("UPDATE payouts", {}, Exception("connection refused"))

    with pytest.raises(OperationalError):
        write()
    assert calls == [1]
