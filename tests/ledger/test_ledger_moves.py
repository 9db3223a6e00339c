"""Every allowed move through the Ledger API on a real database, illegal ones, and statuses
recorded forward only (duplicates, late webhooks, the platform's correction)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from ledger_support import FakeClock, instructions, unique

from payflow.ledger import (
    FINAL_STATUSES,
    EventSource,
    IllegalTransition,
    LeaseLost,
    Ledger,
    LedgerError,
    RowState,
    StatusUpdate,
    UnknownPayout,
)

S = RowState


def _submitting(ledger: Ledger, rows: int = 1) -> tuple[str, list[str]]:
    batch, p = unique("b"), unique()
    ledger.register_batch(batch, "a.csv", instructions(p, rows), [])
    claimed = ledger.claim_for_submit(batch, "w1", rows)
    return batch, [c.external_id for c in claimed]


def _state(ledger: Ledger, batch: str, external_id: str) -> RowState:
    return next(r.state for r in ledger.batch_rows(batch) if r.external_id == external_id)


def _history(ledger: Ledger, external_id: str) -> list[tuple[str | None, str, str]]:
    return [(e.from_state, e.to_state, e.source) for e in ledger.status_events(external_id)]


@pytest.mark.parametrize("status", [S.CREATED, S.PROCESSING, *sorted(FINAL_STATUSES)])
def test_submitting_to_every_service_status(ledger: Ledger, status: RowState) -> None:
    batch, [ext] = _submitting(ledger)
    payout_id = unique("pay")
    assert ledger.mark_created(ext, payout_id, status.value, "ok")
    [row] = ledger.batch_rows(batch)
    assert (row.state, row.payout_id, row.status_message) == (status, payout_id, "ok")
    assert _history(ledger, ext)[-1] == ("SUBMITTING", status.value, "submit")


@pytest.mark.parametrize(
    ("mark", "expected"),
    [("mark_submit_rejected", S.SUBMIT_REJECTED), ("mark_conflict", S.CONFLICT)],
)
def test_submitting_to_a_refusal(ledger: Ledger, mark: str, expected: RowState) -> None:
    batch, [ext] = _submitting(ledger)
    assert getattr(ledger, mark)(ext, "why", worker_id="w1")
    assert _state(ledger, batch, ext) is expected
    assert ledger.claim_for_submit(batch, "w1", 5) == []  # never sent again
    assert not getattr(ledger, mark)(ext, "why again")  # a repeat is a no-op


def test_submitting_back_to_validated_after_a_404_lookup(ledger: Ledger) -> None:
    batch, [ext] = _submitting(ledger)
    assert ledger.release_for_retry(ext, worker_id="w1")
    assert _state(ledger, batch, ext) is S.VALIDATED
    assert not ledger.release_for_retry(ext)  # already released: nothing to do
    assert _history(ledger, ext)[-1] == ("SUBMITTING", "VALIDATED", "resolve")


@pytest.mark.parametrize("target", [S.PROCESSING, *sorted(FINAL_STATUSES)])
def test_created_moves_forward(ledger: Ledger, target: RowState) -> None:
    batch, [ext] = _submitting(ledger)
    ledger.mark_created(ext, payout_id := unique("pay"), "CREATED")
    assert ledger.record_status(
        payout_id=payout_id, status=target.value, status_message=None, source="webhook"
    )
    assert _state(ledger, batch, ext) is target


@pytest.mark.parametrize("target", sorted(FINAL_STATUSES))
def test_processing_moves_to_every_final_status(
    ledger: Ledger, clock: FakeClock, target: RowState
) -> None:
    batch, [ext] = _submitting(ledger)
    ledger.mark_created(ext, unique("pay"), "PROCESSING")
    assert ledger.record_status(external_id=ext, status=target, status_message="x", source="poll")
    assert _state(ledger, batch, ext) is target
    assert ledger.payouts_to_poll(batch, clock.now + timedelta(days=1), 10) == []


def test_duplicates_and_late_statuses_change_nothing(ledger: Ledger) -> None:
    batch, [ext] = _submitting(ledger)
    ledger.mark_created(ext, payout_id := unique("pay"), "CREATED")
    kw = {"payout_id": payout_id, "status_message": None, "source": "webhook"}
    assert ledger.record_status(status="PROCESSING", **kw)  # type: ignore[arg-type]
    assert not ledger.record_status(status="PROCESSING", **kw)  # type: ignore[arg-type]
    assert ledger.record_status(status="COMPLETED", **kw)  # type: ignore[arg-type]
    for late in ("COMPLETED", "PROCESSING", "CREATED"):
        assert not ledger.record_status(status=late, **kw)  # type: ignore[arg-type]
    assert _state(ledger, batch, ext) is S.COMPLETED
    assert [h[1] for h in _history(ledger, ext)] == [
        "SUBMITTING",
        "CREATED",
        "PROCESSING",
        "COMPLETED",
    ]


def test_the_platforms_correction_is_recorded_and_flagged(ledger: Ledger) -> None:
    batch, [ext] = _submitting(ledger)
    ledger.mark_created(ext, payout_id := unique("pay"), "COMPLETED")
    assert ledger.record_status(
        payout_id=payout_id,
        status="FAILED",
        status_message="bank returned the funds",
        source="poll",
    )
    [row] = ledger.batch_rows(batch)
    assert row.state is S.FAILED and row.corrected
    assert row.status_message == "bank returned the funds"
    assert _history(ledger, ext)[-1] == ("COMPLETED", "FAILED", "poll")
    # The COMPLETED webhook delivered again after the correction is old news, not an error.
    assert not ledger.record_status(
        payout_id=payout_id, status="COMPLETED", status_message=None, source="webhook"
    )
    assert ledger.batch_summary(batch) == {"FAILED": 1}


@pytest.mark.parametrize(
    ("start", "status"),
    [
        ("FAILED", "COMPLETED"),
        ("CANCELED", "COMPLETED"),
        ("EXPIRED", "FAILED"),
        ("COMPLETED", "CANCELED"),
    ],
)
def test_final_statuses_do_not_jump_to_other_finals(
    ledger: Ledger, start: str, status: str
) -> None:
    batch, [ext] = _submitting(ledger)
    ledger.mark_created(ext, unique("pay"), start)
    with pytest.raises(IllegalTransition):
        ledger.record_status(external_id=ext, status=status, status_message=None, source="poll")
    assert _state(ledger, batch, ext) is S(start)


def test_statuses_for_rows_never_sent_are_illegal(ledger: Ledger) -> None:
    batch, p = unique("b"), unique()
    ledger.register_batch(batch, "a.csv", instructions(p, 2), [])
    with pytest.raises(IllegalTransition):  # VALIDATED: nothing was POSTed
        ledger.record_status(
            external_id=f"{p}-2", status="COMPLETED", status_message=None, source="webhook"
        )
    [claimed] = ledger.claim_for_submit(batch, "w", 1)
    ledger.mark_submit_rejected(claimed.external_id, "400")
    with pytest.raises(IllegalTransition):
        ledger.record_status(
            external_id=claimed.external_id, status="CREATED", status_message=None, source="webhook"
        )
    with pytest.raises(IllegalTransition):
        ledger.mark_conflict(claimed.external_id, "late")
    with pytest.raises(LeaseLost):  # VALIDATED: nobody holds it, yet a payout turns up
        ledger.mark_created(f"{p}-3", unique("pay"), "CREATED")


def test_unknown_statuses_are_kept_as_the_message(ledger: Ledger) -> None:
    batch, [ext] = _submitting(ledger)
    ledger.mark_created(ext, unique("pay"), "PROCESSING")
    assert not ledger.record_status(
        external_id=ext, status="ON_HOLD", status_message="aml", source="poll"
    )
    [row] = ledger.batch_rows(batch)
    assert row.state is S.PROCESSING
    assert row.status_message == "unrecognised status 'ON_HOLD': aml"


def test_a_webhook_ahead_of_mark_created_wins_and_the_mark_still_stores_the_id(
    ledger: Ledger,
) -> None:
    batch, [ext] = _submitting(ledger)
    assert ledger.record_status(
        external_id=ext, status="PROCESSING", status_message=None, source="webhook"
    )
    assert not ledger.mark_created(ext, payout_id := unique("pay"), "CREATED")
    [row] = ledger.batch_rows(batch)
    assert (row.state, row.payout_id) == (S.PROCESSING, payout_id)
    with pytest.raises(LedgerError, match="has payout"):
        ledger.mark_created(ext, unique("other"), "CREATED")


def test_unknown_payouts_raise(ledger: Ledger) -> None:
    with pytest.raises(UnknownPayout):
        ledger.record_status(
            payout_id=unique("nope"), status="COMPLETED", status_message=None, source="webhook"
        )
    with pytest.raises(ValueError, match="external_id or a payout_id"):
        ledger.record_status(status="COMPLETED", status_message=None, source="webhook")


def test_times_are_aware_utc(ledger: Ledger, clock: FakeClock) -> None:
    _batch, [ext] = _submitting(ledger)
    at = clock.now - timedelta(minutes=3)
    ledger.mark_created(ext, payout_id := unique("pay"), "CREATED")
    ledger.record_status(
        payout_id=payout_id, status="COMPLETED", status_message=None, source="webhook", at=at
    )
    last = ledger.status_events(ext)[-1]
    assert last.at == at and last.at.utcoffset() == timedelta(0)


def test_many_statuses_in_one_transaction_each_settled_alone(ledger: Ledger) -> None:
    batch, exts = _submitting(ledger, 3)
    for ext in exts:
        ledger.mark_created(ext, unique("pay"), "CREATED")
    first, second, third = exts
    updates = [
        StatusUpdate("PROCESSING", None, EventSource.WEBHOOK, external_id=first),
        StatusUpdate("COMPLETED", "paid", EventSource.WEBHOOK, external_id=first),
        StatusUpdate("COMPLETED", "again", EventSource.WEBHOOK, external_id=first),  # duplicate
        StatusUpdate("FAILED", "no", EventSource.WEBHOOK, payout_id=unique("nobody's")),
        StatusUpdate("PROCESSING", None, EventSource.WEBHOOK, external_id=second),
        StatusUpdate("FAILED", "closed", EventSource.WEBHOOK, external_id=third),
        StatusUpdate("PROCESSING", None, EventSource.WEBHOOK, external_id=third),  # late
    ]
    results = ledger.record_statuses(updates)
    assert results[:3] == [True, True, False]
    assert isinstance(results[3], UnknownPayout)
    assert results[4:] == [True, True, False]
    assert _state(ledger, batch, first) is S.COMPLETED
    assert _state(ledger, batch, second) is S.PROCESSING
    assert _state(ledger, batch, third) is S.FAILED
    assert [h[1] for h in _history(ledger, first)] == [
        "SUBMITTING",
        "CREATED",
        "PROCESSING",
        "COMPLETED",
    ]


def test_an_update_that_raises_is_rolled_back_alone(ledger: Ledger) -> None:
    batch, p = unique("b"), unique()
    ledger.register_batch(batch, "a.csv", instructions(p, 2), [])
    [sent] = ledger.claim_for_submit(batch, "w", 1)
    ledger.mark_created(sent.external_id, unique("pay"), "CREATED")
    never_sent = next(r.external_id for r in ledger.batch_rows(batch) if r.state is S.VALIDATED)
    results = ledger.record_statuses(
        [
            # A payout id for a row never POSTed: the id is written, then the move is refused;
            # the savepoint must take the id back with it.
            StatusUpdate("COMPLETED", None, EventSource.WEBHOOK, never_sent, unique("pay")),
            StatusUpdate("COMPLETED", None, EventSource.POLL, external_id=sent.external_id),
        ]
    )
    assert isinstance(results[0], IllegalTransition)
    assert results[1] is True
    rows = {r.external_id: r for r in ledger.batch_rows(batch)}
    assert (rows[never_sent].state, rows[never_sent].payout_id) == (S.VALIDATED, None)
    assert _history(ledger, never_sent) == []
    assert rows[sent.external_id].state is S.COMPLETED
