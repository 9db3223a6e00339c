"""`mark_created_many`: the submit engine's batched writes behave as `mark_created` row by row,
in one transaction, and a row that fails a check neither stops nor half-writes the others."""

from __future__ import annotations

from ledger_support import instructions, unique

from payflow.ledger import (
    CreatedPayout,
    EventSource,
    LeaseLost,
    Ledger,
    LedgerError,
    RowState,
    UnknownPayout,
)

S = RowState


def pid(external_id: str) -> str:
    """A service payout id; unique like the externalId (the PostgreSQL database is shared)."""
    return "pay-" + external_id


def _submitting(ledger: Ledger, rows: int) -> tuple[str, list[str]]:
    batch, prefix = unique("b"), unique()
    ledger.register_batch(batch, "a.csv", instructions(prefix, rows), [])
    claimed = ledger.claim_for_submit(batch, "w1", rows)
    return batch, [c.external_id for c in claimed]


def _states(ledger: Ledger, batch: str) -> dict[str, tuple[RowState, str | None]]:
    return {
        r.external_id: (r.state, r.payout_id)
        for r in ledger.batch_rows(batch)
        if r.external_id is not None
    }


def test_every_row_moves_with_its_payout_id_and_one_event(ledger: Ledger) -> None:
    batch, ids = _submitting(ledger, 3)
    outcome = ledger.mark_created_many(
        [
            CreatedPayout(ids[0], pid(ids[0]), "CREATED"),
            CreatedPayout(ids[1], pid(ids[1]), "PROCESSING", source=EventSource.RESOLVE),
            CreatedPayout(ids[2], pid(ids[2]), "COMPLETED"),
        ]
    )
    assert (outcome.moved, outcome.unchanged, outcome.errors) == (3, 0, {})
    assert _states(ledger, batch) == {
        ids[0]: (S.CREATED, pid(ids[0])),
        ids[1]: (S.PROCESSING, pid(ids[1])),
        ids[2]: (S.COMPLETED, pid(ids[2])),
    }
    events = [(e.from_state, e.to_state, e.source) for e in ledger.status_events(ids[1])]
    assert events[-1] == (S.SUBMITTING, S.PROCESSING, "resolve")
    # Claimed rows are released: a later claim has nothing of this batch to take.
    assert ledger.claim_for_submit(batch, "w2", 10) == []


def test_a_row_already_moved_by_a_webhook_is_unchanged(ledger: Ledger) -> None:
    batch, [ext] = _submitting(ledger, 1)
    ledger.record_status(
        external_id=ext,
        payout_id=pid(ext),
        status="PROCESSING",
        status_message=None,
        source="webhook",
    )
    outcome = ledger.mark_created_many([CreatedPayout(ext, pid(ext), "CREATED")])
    assert (outcome.moved, outcome.unchanged) == (0, 1)
    assert _states(ledger, batch)[ext] == (S.PROCESSING, pid(ext))


def test_failing_rows_are_reported_and_the_others_written(ledger: Ledger) -> None:
    batch, ids = _submitting(ledger, 4)
    ledger.mark_created(ids[1], pid(ids[1]), "CREATED")
    ledger.release_for_retry(ids[2], worker_id="w1")
    outcome = ledger.mark_created_many(
        [
            CreatedPayout(ids[0], pid(ids[0]), "CREATED"),
            CreatedPayout(ids[1], pid(ids[1]) + "-other", "CREATED"),  # another id already stored
            CreatedPayout(ids[2], pid(ids[2]), "CREATED"),  # released for retry meanwhile
            CreatedPayout("nobody-knows-me", pid("nobody-knows-me"), "CREATED"),
            CreatedPayout(ids[3], pid(ids[3]), "CREATED"),
        ]
    )
    assert outcome.moved == 2
    assert type(outcome.errors[ids[1]]) is LedgerError
    assert isinstance(outcome.errors[ids[2]], LeaseLost)
    assert isinstance(outcome.errors["nobody-knows-me"], UnknownPayout)
    states = _states(ledger, batch)
    assert states[ids[0]] == (S.CREATED, pid(ids[0]))
    assert states[ids[1]] == (S.CREATED, pid(ids[1]))
    assert states[ids[2]] == (S.VALIDATED, None)
    assert states[ids[3]] == (S.CREATED, pid(ids[3]))


def test_an_unrecognised_status_keeps_the_payout_tracked_as_created(ledger: Ledger) -> None:
    batch, [ext] = _submitting(ledger, 1)
    outcome = ledger.mark_created_many([CreatedPayout(ext, pid(ext), "ON_HOLD")])
    assert outcome.moved == 1
    [view] = list(ledger.batch_rows(batch))
    assert (view.state, view.payout_id) == (S.CREATED, pid(ext))
    assert "ON_HOLD" in (view.status_message or "")


def test_two_items_for_one_row_apply_in_order(ledger: Ledger) -> None:
    batch, [ext] = _submitting(ledger, 1)
    outcome = ledger.mark_created_many(
        [CreatedPayout(ext, pid(ext), "CREATED"), CreatedPayout(ext, pid(ext), "COMPLETED")]
    )
    assert (outcome.moved, outcome.errors) == (2, {})
    assert _states(ledger, batch)[ext] == (S.COMPLETED, pid(ext))


def test_many_rows_span_several_selects(ledger: Ledger) -> None:
    batch, ids = _submitting(ledger, 1203)
    outcome = ledger.mark_created_many([CreatedPayout(e, pid(e), "CREATED") for e in ids])
    assert (outcome.moved, outcome.errors) == (1203, {})
    assert {state for state, _ in _states(ledger, batch).values()} == {S.CREATED}
