"""Tracking: polling to final, the deadline, the balance (corrections: tests/reconcile)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest
from paying_support import make_client, register, rows, unique
from support.stats import sandbox_stats
from support.tracking import TRACK_QUIET_PERIOD

from payflow.connections import RunTarget
from payflow.ledger import EventSource, Ledger, RowState
from payflow.paying import check_balance, submit_batch, track_batch
from payflow.paying.knobs import PayKnobs
from payflow.settings import Settings
from payflow.tasks.track_payouts import track_payouts

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


@pytest.mark.parametrize("busy_quiet_period", [60.0, 0.0], ids=["patient", "not-patient"])
async def test_a_payout_not_heard_from_waits_while_webhooks_for_the_batch_keep_coming(
    client, ledger, sandbox, busy_quiet_period
):
    # A backlogged webhook channel: the batch's webhooks arrive one by one, and polling the
    # payouts still queued in it would only add load. With the patience off (0: the quiet
    # period alone) the same payouts are polled while the channel still delivers.
    heard = rows(unique("heard"), 25)
    silent = rows(unique("silent"), 2, first_row=40)
    batch_id = register(ledger, heard + silent)
    await _submit(client, ledger, batch_id)  # no callback URL: the sandbox sends no webhook
    silent_external_ids = {instruction.external_id for instruction in silent}
    silent_ids = {
        ref.payout_id
        for ref in ledger.unfinished(batch_id)
        if ref.external_id in silent_external_ids
    }

    def webhook(instruction) -> None:
        ledger.record_status(
            external_id=instruction.external_id,
            status="COMPLETED",
            status_message=None,
            source=EventSource.WEBHOOK,
        )

    webhook(heard[0])  # the channel is live before tracking starts
    tracking = asyncio.create_task(
        track_batch(
            client,
            ledger,
            batch_id,
            deadline=30,
            poll_interval=0.05,
            poll_max_interval=0.2,
            quiet_period=2.0,
            busy_quiet_period=busy_quiet_period,
        )
    )
    for instruction in heard[1:]:
        await asyncio.sleep(0.2)
        await asyncio.to_thread(webhook, instruction)
    reads_while_coming = sandbox_stats(sandbox)["payoutReadsById"]
    result = await tracking

    polled_early = silent_ids & reads_while_coming.keys()
    if busy_quiet_period:
        assert not polled_early
    else:
        assert polled_early == silent_ids
    # Either way the silent ones are polled once the channel is quiet, and end final by poll.
    assert result.all_final
    stats = sandbox_stats(sandbox)
    assert silent_ids <= stats["payoutReadsById"].keys()
    for instruction in silent:
        last = ledger.status_events(instruction.external_id)[-1]
        assert last.to_state == RowState.COMPLETED and last.source == "poll"
    if busy_quiet_period:
        # Nothing a webhook finished was read: the silent payouts were the only polls.
        assert stats["payoutReadsById"].keys() == silent_ids


@pytest.mark.parametrize(
    "database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_two_trackers_of_one_batch_poll_each_payout_once(
    client, sandbox, ledger_url, request, database
):
    # Two pay runs of one batch each track the whole batch. Both used to read the same page of
    # due payouts and GET every one of them: at 20,000 rows on two workers, 13,067 of the
    # 13,240 payouts polled were read twice, on a sandbox already short of CPU. A page is now
    # taken: the second tracker finds the next one, or nothing.
    url = request.getfixturevalue("postgres_url") if database == "postgres" else ledger_url
    with Ledger.open(url) as first, Ledger.open(url) as second:
        batch = rows(unique("two"), 40)
        batch_id = register(first, batch)
        await _submit(client, first, batch_id)  # no callback URL: polls are the only news
        for _ in range(100):  # every payout final at the sandbox: one poll each finds it so
            if all(p["status"] == "COMPLETED" for p in sandbox_stats(sandbox)["payouts"]):
                break
            await asyncio.sleep(0.1)
        results = await asyncio.gather(
            *(
                track_batch(
                    client, ledger, batch_id, deadline=10, **{**FAST_TRACK, "quiet_period": 0}
                )
                for ledger in (first, second)
            )
        )
    assert all(result.all_final for result in results)
    reads = sandbox_stats(sandbox)["payoutReadsById"]
    assert len(reads) == len(batch)
    assert set(reads.values()) == {1}


def test_the_track_task_polls_after_the_quiet_period_its_settings_give(ledger, sandbox, tmp_path):
    # No callbackUrl, so no webhook comes: the payouts' only news is their creation, and the task
    # polls them once PAYFLOW_TRACK_QUIET_PERIOD has passed. Before the setting reached it, the
    # task waited track_batch's own 5 s, longer than this deadline, and reported them pending.
    batch_id = register(ledger, rows(unique("quiet"), 2))

    async def send() -> None:
        async with make_client(sandbox) as client:
            await _submit(client, ledger, batch_id)

    asyncio.run(send())
    settings = Settings(home=tmp_path, track_quiet_period=0, track_deadline=4, poll_interval=0.05)
    target = RunTarget(sandbox.url, ledger.url, sandbox=True)
    result = track_payouts.fn(target, batch_id, PayKnobs.from_settings(settings))
    assert (result.timed_out, result.counts) == (False, {RowState.COMPLETED.value: 2})


def test_pay_runs_in_the_test_process_poll_after_the_tests_short_quiet_period():
    # pay_batch builds its knobs from Settings() read from the environment: tests/conftest.py
    # sets it for every in-process pay run, which otherwise waited 5 s for its first poll.
    assert Settings.model_fields["track_quiet_period"].default == 5.0
    knobs = PayKnobs.from_settings(Settings())
    assert knobs.quiet_period == float(TRACK_QUIET_PERIOD)
