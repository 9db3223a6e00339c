"""Unusual externalIds travel as one escaped path segment, and a row that fails in a way the
protocol does not know is set aside as that row's error while the others are paid (issue 7,
item 4)."""

from __future__ import annotations

import pytest
from paying_support import register, row, states, unique
from support.stats import sandbox_stats, set_faults

from payflow.ledger import RowState
from payflow.paying import submit_batch

UNUSUAL = ["  x ", "a/b", "%2F", "?x", "#", "ü/√ 東京", "...", "a%20b", "x" * 255]


@pytest.mark.parametrize("lost", [False, True], ids=["answered", "lost-response"])
async def test_unusual_external_ids_are_created_and_found_by_lookup(sandbox, client, ledger, lost):
    ids = [" ", *UNUSUAL]
    instructions = [row(e, n) for n, e in enumerate(ids, start=2)]
    if lost:
        # Every POST creates the payout but loses the answer: each row is resolved by GET
        # /v1/payouts/external/{externalId}, which must find exactly that payout.
        set_faults(sandbox.url, lost_response_rate=1.0)
    batch_id = register(ledger, instructions)

    stats = await submit_batch(
        client, ledger, batch_id, worker_id="w1", chunk_size=50, callback_url=None
    )

    assert (stats.created + stats.adopted, stats.rejected, stats.unresolved) == (len(ids), 0, 0)
    assert stats.adopted == (len(ids) if lost else 0)
    assert set(states(ledger, batch_id).values()) <= {"CREATED", "PROCESSING", "COMPLETED"}
    made = sandbox_stats(sandbox.url)["payoutsByExternalId"]
    assert {e: made.get(e) for e in ids} == dict.fromkeys(ids, 1)


async def test_a_row_that_fails_unexpectedly_is_set_aside_and_the_others_are_paid(
    sandbox, client, ledger
):
    tag = unique("s")
    good = [row(f"{tag}-{n}", n) for n in range(2, 7)]
    dots = [row(".", 7), row("..", 8)]  # no URL path can carry them: never sent
    too_long = row(tag + "y" * 300, 9)  # the request model refuses it before sending
    batch_id = register(ledger, [*good, *dots, too_long])

    stats = await submit_batch(
        client, ledger, batch_id, worker_id="w1", chunk_size=50, callback_url=None
    )

    assert (stats.created, stats.rejected, stats.unresolved) == (5, 3, 0)
    by_id = {view.external_id: view for view in ledger.batch_rows(batch_id)}
    assert {by_id[r.external_id].state for r in good} <= {
        RowState.CREATED,
        RowState.PROCESSING,
        RowState.COMPLETED,
    }
    for bad in [*dots, too_long]:
        view = by_id[bad.external_id]
        assert view.state is RowState.SUBMIT_REJECTED
        assert view.status_message and view.status_message.startswith("not sent:")
        assert bad.requisites not in view.status_message
    assert "cannot be used in a URL path" in str(by_id["."].status_message)
    attempts = sandbox_stats(sandbox.url)["createAttempts"]
    assert all(attempts.get(bad.external_id, 0) == 0 for bad in [*dots, too_long])
    assert all(ref.state is not RowState.SUBMITTING for ref in ledger.unfinished(batch_id))
