"""Tracking: polling to final, the deadline, the balance (corrections: tests/reconcile)."""

from __future__ import annotations

from decimal import Decimal

from paying_support import make_client, register, rows, unique
from support.stats import sandbox_stats

from payflow.ledger import RowState
from payflow.paying import check_balance, submit_batch, track_batch

FAST_TRACK = {"poll_interval": 0.05, "poll_max_interval": 0.2, "quiet_period": 0.05}


async def _submit(client, ledger, batch_id):
    return await submit_batch(
        client, ledger, batch_id, worker_id="w", chunk_size=50, callback_url=None
    )


async def test_a_payout_that_never_finishes_is_reported_pending_at_the_deadline(client, ledger):
    never = rows(unique("never"), 2, last4="5555")
    done = rows(unique("done"), 3, first_row=10)
    batch_id = register(ledger, never + done)
    await _submit(client, ledger, batch_id)
    result = await track_batch(client, ledger, batch_id, deadline=1.5, **FAST_TRACK)
    assert result.timed_out and not result.all_final
    assert result.pending_external_ids == sorted(r.external_id for r in never)
    assert result.counts.get(RowState.COMPLETED.value) == 3


async def test_balance_shortfall_is_found_before_any_payout(make_sandbox, ledger):
    sandbox = make_sandbox(balances={"XOF": Decimal("50"), "RUB": Decimal("10")})
    batch = rows(unique("poor"), 3)  # 15 + 20 + 25 XOF
    register(ledger, batch)
    totals = {"XOF": sum((r.amount for r in batch), Decimal(0)), "RUB": Decimal("5")}
    async with make_client(sandbox) as client:
        check = await check_balance(client, totals)
    assert not check.ok and check.known
    assert [s.currency for s in check.shortfalls] == ["XOF"]
    assert "XOF" in check.message and "RUB" not in check.message
    assert sandbox_stats(sandbox.url)["createAttempts"] == {}


async def test_a_balance_that_covers_the_batch_passes(client):
    check = await check_balance(client, {"XOF": Decimal("1000")})
    assert check.ok and check.known
