"""Must show: 2,000 rows through a faulty sandbox end final, with one payout per externalId.

A row whose POST and every lookup after it failed is left SUBMITTING (nobody knows whether the
payout exists). The next run looks it up before anything else, so the test runs next runs, as
the flow does, until no row is left.
"""

from __future__ import annotations

import pytest
from paying_support import make_client, register, rows, states, unique
from support.stats import sandbox_stats

from payflow.ledger import FINAL_STATUSES
from payflow.paying import submit_batch, track_batch
from payflow.webhooks import WebhookReceiver

ROWS = 2_000
MAX_ATTEMPTS = 4
# Each row's lookups fail together about once in a few thousand: a handful at most per run.
MOST_LEFT_FOR_NEXT_RUN = 5
NEXT_RUNS = 3


@pytest.mark.slow
async def test_two_thousand_rows_under_faults_are_paid_exactly_once(
    make_sandbox, ledger, ledger_url
):
    sandbox = make_sandbox(
        latency=0.002,
        lost_response_rate=0.05,
        error_rate=0.05,
        rate_limit_rate=0.02,
        webhook_drop_rate=0.1,
        webhook_duplicate_rate=0.1,
        webhook_reorder_rate=0.1,
    )
    batch = rows(unique("faults"), ROWS)
    batch_id = register(ledger, batch)
    with WebhookReceiver(ledger_url, sandbox.token) as receiver:
        async with make_client(sandbox, max_in_flight=32) as client:
            stats = await submit_batch(
                client,
                ledger,
                batch_id,
                worker_id="w1",
                chunk_size=500,
                callback_url=receiver.url,
                max_attempts=MAX_ATTEMPTS,
            )
            assert len(set(stats.left_for_next_run)) <= MOST_LEFT_FOR_NEXT_RUN, stats
            left = stats.left_for_next_run
            runs = 1
            for run in range(NEXT_RUNS):
                if not left:
                    break
                # What the next run does first: the earlier worker is gone, its leases end.
                ledger.release_stale_leases(batch_id, f"w{run + 1}")
                again = await submit_batch(
                    client,
                    ledger,
                    batch_id,
                    worker_id=f"w{run + 2}",
                    chunk_size=500,
                    callback_url=receiver.url,
                    max_attempts=MAX_ATTEMPTS,
                )
                stats.merge(again)
                left = again.left_for_next_run
                runs += 1
            result = await track_batch(
                client, ledger, batch_id, deadline=120, poll_interval=0.5, quiet_period=1.0
            )
    # A row left SUBMITTING may learn its payout from the service's webhook before the next
    # run looks it up: the ledger, not the runs' counts, says every row has its payout.
    assert stats.submitted <= ROWS, stats
    assert all(view.payout_id for view in ledger.batch_rows(batch_id))
    assert stats.adopted > 0, "lost responses must have been adopted by lookup"
    assert result.all_final, result.pending_external_ids[:5]

    sandbox_view = sandbox_stats(sandbox.url)
    ids = [r.external_id for r in batch]
    assert {sandbox_view["payoutsByExternalId"].get(e) for e in ids} == {1}
    attempts = [sandbox_view["createAttempts"][e] for e in ids]
    assert max(attempts) <= MAX_ATTEMPTS * runs  # each run sends a row at most that often
    assert sum(attempts) < ROWS * 1.2  # faults cost retries, not a resend of every row

    service_status = {p["id"]: p["status"] for p in sandbox_view["payouts"]}
    ledger_states = states(ledger, batch_id)
    finals = {s.value for s in FINAL_STATUSES}
    for view in ledger.batch_rows(batch_id):
        assert ledger_states[view.external_id] in finals
        assert service_status[view.payout_id] == view.state.value
