"""Statuses recorded as a group (the webhook receiver's and the poller's path) end exactly as
the same statuses recorded one by one, and a group of plain moves costs a few statements."""

from __future__ import annotations

import random
from typing import Any

import pytest
from ledger_support import instructions, unique
from sqlalchemy import event

from payflow.ledger import EventSource, IllegalTransition, Ledger, LedgerError, StatusUpdate

# Mostly what a healthy channel says, sometimes a correction, an illegal or unknown status.
STATUSES = ("PROCESSING",) * 8 + ("COMPLETED",) * 8 + ("FAILED", "CANCELED", "EXPIRED", "PAUSED")


def _sent(ledger: Ledger, batch: str, rows: int, unanswered: int = 0) -> list[tuple[str, str]]:
    """`rows` payouts of `batch` CREATED at the service: (externalId, payout id) each. The last
    `unanswered` are still SUBMITTING, their payout ids not yet in the ledger: their webhooks
    come before the answers to their POSTs."""
    ledger.register_batch(batch, "a.csv", instructions(batch, rows), [])
    pairs = []
    for n, claimed in enumerate(ledger.claim_for_submit(batch, "w", rows)):
        payout_id = f"pay-{claimed.external_id}"
        if n < rows - unanswered:
            ledger.mark_created(claimed.external_id, payout_id, "CREATED")
        pairs.append((claimed.external_id, payout_id))
    return sorted(pairs)


def _updates(pairs: list[tuple[str, str]], seed: int, count: int) -> list[StatusUpdate]:
    """Random webhooks and polls: duplicates, late ones, corrections, illegal moves, unknown
    statuses and payouts, keyed by externalId, payout id or both."""
    rng = random.Random(seed)
    updates = []
    for _ in range(count):
        external_id, payout_id = rng.choice(pairs)
        key = rng.choice(("external", "payout", "both"))
        if rng.random() < 0.02:
            external_id, payout_id, key = "nobody", "pay-nobody", "payout"
        updates.append(
            StatusUpdate(
                status=rng.choice(STATUSES),
                message=rng.choice((None, "said so")),
                source=rng.choice((EventSource.WEBHOOK, EventSource.POLL)),
                external_id=None if key == "payout" else external_id,
                payout_id=None if key == "external" else payout_id,
            )
        )
    return updates


def _plain_updates(pairs: list[tuple[str, str]]) -> list[StatusUpdate]:
    """What a healthy webhook channel sends: PROCESSING then COMPLETED, some twice."""
    updates = []
    for external_id, payout_id in pairs:
        for status in ("PROCESSING", "COMPLETED", "COMPLETED"):
            updates.append(StatusUpdate(status, None, EventSource.WEBHOOK, external_id, payout_id))
    return updates


def _everything(ledger: Ledger, batch: str) -> list[Any]:
    """Every row of the batch and its history, in row order, without its own ids."""
    return [
        (
            row.state,
            None if row.payout_id is None else row.payout_id == f"pay-{row.external_id}",
            row.status_message,
            [
                (e.from_state, e.to_state, e.source, e.at, e.status_message)
                for e in ledger.status_events(row.external_id)
            ],
        )
        for row in ledger.batch_rows(batch)
    ]


def _outcome(result: object) -> object:
    return result if isinstance(result, bool) else type(result).__name__


def _one_by_one(ledger: Ledger, updates: list[StatusUpdate]) -> list[object]:
    # record_status: one transaction per update, decided by `_record_in` alone (a group of one
    # would take the planner too, and the test would compare the planner with itself).
    results: list[object] = []
    for update in updates:
        try:
            moved = ledger.record_status(
                external_id=update.external_id,
                payout_id=update.payout_id,
                status=update.status,
                status_message=update.message,
                source=update.source,
                at=update.at,
            )
        except (LedgerError, IllegalTransition) as exc:
            results.append(_outcome(exc))
        else:
            results.append(moved)
    return results


def _in_groups(ledger: Ledger, updates: list[StatusUpdate], seed: int) -> list[object]:
    rng = random.Random(seed)
    results: list[object] = []
    start = 0
    while start < len(updates):
        size = rng.choice((1, 2, 5, 20, 60))
        results += [_outcome(r) for r in ledger.record_statuses(updates[start : start + size])]
        start += size
    return results


@pytest.mark.parametrize("seed", range(3))
def test_a_group_ends_as_the_same_updates_one_by_one(ledger: Ledger, seed: int) -> None:
    # The same story, drawn with the same seed, for two batches of 40 payouts: one recorded
    # update by update, the other in groups of random sizes.
    alone, together = unique("a"), unique("t")
    story = {batch: _sent(ledger, batch, 40, unanswered=10) for batch in (alone, together)}
    updates = {batch: _updates(pairs, seed, 240) for batch, pairs in story.items()}
    one = _one_by_one(ledger, updates[alone])
    many = _in_groups(ledger, updates[together], seed)
    assert many == one
    assert _everything(ledger, together) == _everything(ledger, alone)


def _plain_group_statements(ledger: Ledger, pairs: list[tuple[str, str]]) -> int:
    """Record a healthy channel's webhooks for `pairs` as one group; the statements it took."""
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    event.listen(ledger.engine, "before_cursor_execute", count)
    try:
        results = ledger.record_statuses(_plain_updates(pairs))
    finally:
        event.remove(ledger.engine, "before_cursor_execute", count)
    assert results == [True, True, False] * len(pairs)
    return len([s for s in statements if not s.startswith(("BEGIN", "COMMIT"))])


def test_a_group_of_plain_moves_is_written_in_a_few_statements(ledger: Ledger) -> None:
    batch = unique("p")
    pairs = _sent(ledger, batch, 100)
    # One locking read, two rounds of one update (executemany) and one insert each. One by one,
    # it was three statements per update: 900.
    assert _plain_group_statements(ledger, pairs) <= 6
    assert {row.state.value for row in ledger.batch_rows(batch)} == {"COMPLETED"}


def test_webhooks_before_the_answers_to_their_posts_are_plain_moves(ledger: Ledger) -> None:
    # The sandbox and a real service send a payout's first webhook as they create it: it often
    # comes before the submitter stored the payout id from the POST's answer. One by one, such
    # a group took up to five statements per update.
    batch = unique("e")
    pairs = _sent(ledger, batch, 100, unanswered=100)
    assert _plain_group_statements(ledger, pairs) <= 6
    rows = list(ledger.batch_rows(batch))
    assert {row.state.value for row in rows} == {"COMPLETED"}
    assert sorted((row.external_id, row.payout_id) for row in rows) == pairs
