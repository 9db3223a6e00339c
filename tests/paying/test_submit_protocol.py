"""Invariant 1 and 2 row by row, against the real sandbox over HTTP and a real ledger file."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from paying_support import make_client, register, row, rows, states, unique
from support.stats import sandbox_stats, set_faults

from payflow.api.errors import AuthError
from payflow.cli.ledger_checks import not_sent_lines
from payflow.ledger import NOT_SENT_PREFIX, RowState
from payflow.paying import build_payout_request, submit_batch, track_batch
from payflow.settings import Settings


async def _pay(client, ledger, batch_id, **options):
    options.setdefault("worker_id", "w1")
    options.setdefault("chunk_size", 50)
    options.setdefault("callback_url", None)
    return await submit_batch(client, ledger, batch_id, **options)


def _auth(sandbox) -> dict[str, str]:
    return {"X-Api-Token": sandbox.token}


def _attempts(sandbox, external_ids):
    stats = sandbox_stats(sandbox.url)
    return (
        {e: stats["createAttempts"].get(e, 0) for e in external_ids},
        {e: stats["payoutsByExternalId"].get(e, 0) for e in external_ids},
    )


async def test_rows_are_paid_once_and_polled_to_final(sandbox, client, ledger):
    batch = rows(unique("ok"), 20)
    batch_id = register(ledger, batch)
    stats = await _pay(client, ledger, batch_id)
    assert (stats.created, stats.adopted, stats.total) == (20, 0, 20)
    result = await track_batch(
        client, ledger, batch_id, deadline=30, poll_interval=0.05, quiet_period=0.05
    )
    assert result.all_final and not result.timed_out
    assert set(states(ledger, batch_id).values()) == {RowState.COMPLETED.value}
    attempts, payouts = _attempts(sandbox, [r.external_id for r in batch])
    assert set(attempts.values()) == {1} and set(payouts.values()) == {1}


async def test_lost_create_response_is_adopted_not_sent_again(sandbox, client, ledger):
    set_faults(sandbox.url, lost_response_rate=1.0)
    batch = rows(unique("lost"), 5)
    batch_id = register(ledger, batch)
    stats = await _pay(client, ledger, batch_id)
    assert (stats.created, stats.adopted) == (0, 5)
    attempts, payouts = _attempts(sandbox, [r.external_id for r in batch])
    assert set(attempts.values()) == {1} and set(payouts.values()) == {1}
    assert all(s != RowState.SUBMITTING.value for s in states(ledger, batch_id).values())


async def test_409_on_an_existing_payout_is_adopted(sandbox, client, ledger):
    existing = row(unique("dup"), 2)
    await client.create_payout(build_payout_request(existing, callback_url=None))
    batch_id = register(ledger, [existing])
    stats = await _pay(client, ledger, batch_id)
    assert stats.adopted == 1
    _, payouts = _attempts(sandbox, [existing.external_id])
    assert payouts == {existing.external_id: 1}
    assert states(ledger, batch_id)[existing.external_id] != RowState.CONFLICT.value


async def test_same_external_id_with_other_content_is_a_conflict(sandbox, client, ledger):
    ours = row(unique("cf"), 2)
    theirs = ours._replace(amount=ours.amount + Decimal(5))
    await client.create_payout(build_payout_request(theirs, callback_url=None))
    batch_id = register(ledger, [ours])
    stats = await _pay(client, ledger, batch_id)
    assert stats.conflicts == 1
    assert states(ledger, batch_id)[ours.external_id] == RowState.CONFLICT.value
    _, payouts = _attempts(sandbox, [ours.external_id])
    assert payouts == {ours.external_id: 1}
    [view] = list(ledger.batch_rows(batch_id))
    assert "amount" in (view.status_message or "")


async def test_4xx_is_final_with_the_service_message(sandbox, client, ledger):
    bad = row(unique("bad"), 2, amount=Decimal(7))  # XOF must be a multiple of 5
    batch_id = register(ledger, [bad])
    stats = await _pay(client, ledger, batch_id)
    assert stats.rejected == 1
    [view] = list(ledger.batch_rows(batch_id))
    assert view.state == RowState.SUBMIT_REJECTED
    assert view.status_message
    attempts, payouts = _attempts(sandbox, [bad.external_id])
    assert attempts == {bad.external_id: 1} and payouts == {bad.external_id: 0}


async def test_a_run_after_a_crash_resolves_submitting_rows_first(sandbox, client, ledger):
    batch = rows(unique("crash"), 10)
    batch_id = register(ledger, batch)
    # The crashed worker claimed every row and its POSTs landed for the first half only.
    claimed = ledger.claim_for_submit(batch_id, "crashed", 10)
    assert len(claimed) == 10
    for landed in batch[:5]:
        await client.create_payout(build_payout_request(landed, callback_url=None))
    assert ledger.release_stale_leases(batch_id) == 10
    stats = await _pay(client, ledger, batch_id, worker_id="restarted")
    assert (stats.adopted, stats.created) == (5, 5)
    attempts, payouts = _attempts(sandbox, [r.external_id for r in batch])
    assert set(attempts.values()) == {1} and set(payouts.values()) == {1}


async def test_the_same_rows_registered_again_pay_nothing(sandbox, client, ledger):
    batch = rows(unique("again"), 5)
    first = register(ledger, batch)
    await _pay(client, ledger, first)
    outcome = ledger.register_batch(unique("batch-"), "again.csv", batch, [])
    assert len(outcome.already_known) == 5 and outcome.new == 0
    stats = await _pay(client, ledger, outcome.batch_id)
    assert stats.total == 0
    attempts, _ = _attempts(sandbox, [r.external_id for r in batch])
    assert set(attempts.values()) == {1}


async def test_callback_url_is_sent_with_every_payout(sandbox, client, ledger):
    batch = rows(unique("cb"), 3)
    batch_id = register(ledger, batch)
    await _pay(client, ledger, batch_id, callback_url="http://127.0.0.1:9/webhooks")
    sent = [
        p for p in sandbox_stats(sandbox.url)["payouts"] if p["id"] in _payout_ids(ledger, batch_id)
    ]
    assert [p["callbackUrl"] for p in sent] == ["http://127.0.0.1:9/webhooks"] * 3


def _payout_ids(ledger, batch_id):
    return {view.payout_id for view in ledger.batch_rows(batch_id)}


async def test_a_refused_token_stops_the_run_and_sends_nothing_twice(sandbox, ledger):
    batch = rows(unique("auth"), 3)
    batch_id = register(ledger, batch)
    async with make_client(sandbox, token="not-the-token", max_in_flight=4) as refused:
        with pytest.raises(AuthError):
            await _pay(refused, ledger, batch_id)
    assert set(states(ledger, batch_id).values()) == {RowState.VALIDATED.value}
    async with make_client(sandbox) as good:
        stats = await _pay(good, ledger, batch_id)
    assert stats.created == 3
    attempts, payouts = _attempts(sandbox, [r.external_id for r in batch])
    assert set(attempts.values()) == {1} and set(payouts.values()) == {1}


async def test_rows_the_service_refuses_for_the_balance_say_so_and_are_sent_once_topped_up(
    sandbox, client, ledger, tmp_path
):
    # The balance ran out mid-batch: the unsent rows read "still pending at the deadline", with
    # "not found by lookup" in the report and the service's reason nowhere.
    batch = [row(unique("bal"), n, amount=Decimal(1000)) for n in range(2, 7)]
    batch_id = register(ledger, batch)
    balance = httpx.get(f"{sandbox.url}/v1/merchants/balance", headers=_auth(sandbox)).json()
    [xof] = [b for b in balance["balances"] if b["currency"] == "XOF"]
    left = Decimal(xof["available"]) - Decimal(2000)
    httpx.post(
        f"{sandbox.url}/_sandbox/balances", json={"currency": "XOF", "available": str(-left)}
    ).raise_for_status()

    await _pay(client, ledger, batch_id, max_attempts=2)
    views = {v.external_id: v for v in ledger.batch_rows(batch_id)}
    unsent = [v for v in views.values() if v.state is RowState.VALIDATED]
    assert len(unsent) == 3
    assert all(v.status_message.startswith(NOT_SENT_PREFIX) for v in unsent)
    assert "balance" in unsent[0].status_message.lower()

    settings = Settings(api_url=None, ledger_url=ledger.url, home=tmp_path / "home")
    lines, ids = not_sent_lines(settings, batch_id)
    assert ids == {v.external_id for v in unsent}
    assert lines[0].startswith("  3 rows not sent: ") and "top up" in lines[-1]

    httpx.post(
        f"{sandbox.url}/_sandbox/balances", json={"currency": "XOF", "available": "100000"}
    ).raise_for_status()
    await _pay(client, ledger, batch_id)
    _, payouts = _attempts(sandbox, [r.external_id for r in batch])
    assert set(payouts.values()) == {1}
    assert not_sent_lines(settings, batch_id) == ([], set())
