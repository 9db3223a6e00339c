"""Each order is refunded exactly once, under lost responses, 5xx and dropped webhooks."""

from __future__ import annotations

import httpx
import pytest
from refunds_support import make_client, paid_orders, run_refunds, write_refunds
from support.stats import sandbox_stats, set_faults

from payflow.api.refunds import RefundRequest
from payflow.paying import InsufficientBalanceError
from payflow.refunds.report import NO_REFUND_REASON, findings
from payflow.refunds.steps import prepare_refunds
from payflow.refunds.submit import submit_refunds
from payflow.webhooks import WebhookReceiver


@pytest.mark.slow
async def test_a_thousand_refunds_under_faults_refund_each_order_once_and_a_rerun_nothing(
    make_sandbox, ledger, ledger_url, tmp_path
):
    sandbox = make_sandbox()
    orders = paid_orders(sandbox, 1000, amount="25.00")
    set_faults(sandbox, lost_response_rate=0.05, error_rate=0.05, webhook_drop_rate=0.3, seed=11)
    path = write_refunds(
        tmp_path / "big.csv", [[o, f"big-{n:04d}-0001", "", "", ""] for n, o in enumerate(orders)]
    )
    with WebhookReceiver(ledger_url, sandbox.token) as receiver:
        prepared, tracked = await run_refunds(
            path, sandbox, ledger, callback_url=receiver.url, deadline=120
        )
        seen = sandbox_stats(sandbox)
        assert len(seen["refunds"]) == 1000
        assert set(seen["refundsByOrderId"]) == set(orders)
        assert max(seen["refundsByOrderId"].values()) == 1
        assert max(seen["refundsByExternalId"].values()) == 1
        # A lost response is adopted by lookup, never sent again; a 5xx never reached the handler.
        assert set(seen["refundCreateAttempts"].values()) == {1}
        adopted = [
            ext
            for ext in seen["refundCreateAttempts"]
            if any(source == "resolve" for _, _, source, _ in ledger.refunds.events(ext))
        ]
        assert adopted  # the lost responses did bite
        assert tracked.counts == {"COMPLETED": 1000}
        assert all(v.order_status == "REFUND" for v in ledger.refunds.rows(prepared.batch_id))

        set_faults(sandbox, lost_response_rate=0, error_rate=0)
        again, tracked_again = await run_refunds(path, sandbox, ledger, callback_url=receiver.url)
    assert again.registered.already_registered == 1000
    assert tracked_again.counts == {"COMPLETED": 1000}
    assert len(sandbox_stats(sandbox)["refunds"]) == 1000


async def test_the_same_refunds_in_a_new_file_are_known_and_never_sent(sandbox, ledger, tmp_path):
    orders = paid_orders(sandbox, 3)
    rows = [[o, f"same-{n}-0001", "", "", ""] for n, o in enumerate(orders)]
    await run_refunds(write_refunds(tmp_path / "a.csv", rows), sandbox, ledger)
    attempts = sandbox_stats(sandbox)["refundCreateAttempts"]
    edited = write_refunds(tmp_path / "b.csv", [*rows, ["", "", "", "", ""]])
    second, _ = await run_refunds(edited, sandbox, ledger)
    assert len(second.registered.already_known) == 3
    assert sandbox_stats(sandbox)["refundCreateAttempts"] == attempts


async def test_a_balance_shortfall_stops_before_the_first_refund(make_sandbox, ledger, tmp_path):
    sandbox = make_sandbox(balances={"RUB": 0})
    orders = paid_orders(sandbox, 2, amount="50.00")  # credits RUB 100
    # A payout that never finishes holds RUB 60 of it: 40 are left for refunds.
    payout = {
        "amount": "60.00",
        "currency": "RUB",
        "paymentType": "BANK_ACCOUNT",
        "account": {"name": "Ivan", "requisites": "40817810000000005555", "userId": "u-1"},
    }
    headers = {"X-Api-Token": sandbox.token}
    httpx.post(f"{sandbox.url}/v1/payouts", json=payout, headers=headers).raise_for_status()
    path = write_refunds(
        tmp_path / "r.csv", [[o, f"short-{n}", "", "", ""] for n, o in enumerate(orders)]
    )
    with pytest.raises(InsufficientBalanceError, match=r"RUB needs 100\.00, balance 40\.00"):
        await run_refunds(path, sandbox, ledger)
    assert sandbox_stats(sandbox)["refundCreateAttempts"] == {}
    assert sandbox_stats(sandbox)["refunds"] == []


async def test_403_rejects_the_row_with_the_message_and_others_go_on(sandbox, ledger, tmp_path):
    [blocked] = paid_orders(sandbox, 1, apiRefunds=False)
    [fine] = paid_orders(sandbox, 1)
    path = write_refunds(
        tmp_path / "r.csv", [[blocked, "m-0001", "", "", ""], [fine, "m-0002", "", "", ""]]
    )
    prepared, _ = await run_refunds(path, sandbox, ledger)
    views = {v.external_id: v for v in ledger.refunds.rows(prepared.batch_id)}
    assert views["m-0001"].state.value == "SUBMIT_REJECTED"
    assert "not enabled" in (views["m-0001"].status_message or "")
    assert views["m-0002"].state.value == "COMPLETED"
    assert sandbox_stats(sandbox)["refundCreateAttempts"]["m-0001"] == 1


async def test_a_409_for_a_refund_made_elsewhere_is_resolved_by_lookup_never_resent(
    sandbox, ledger, tmp_path
):
    [order] = paid_orders(sandbox, 1)
    async with make_client(sandbox) as client:
        path = write_refunds(tmp_path / "r.csv", [[order, "mine-0001", "", "", ""]])
        prepared = await prepare_refunds(path, client, ledger)
        # Someone refunds the order by hand between the checks and the POST.
        await client.create_refund(RefundRequest(order_id=order, external_id="by-hand-5555"))
        await submit_refunds(client, ledger, prepared.batch_id, worker_id="w", callback_url=None)
    [view] = ledger.refunds.rows(prepared.batch_id)
    assert view.state.value == "SUBMIT_REJECTED"
    assert "already has an active or completed refund" in (view.status_message or "")
    assert sandbox_stats(sandbox)["refundCreateAttempts"]["mine-0001"] == 1


async def test_refund_outcomes_failed_and_pending_are_reported_as_such(sandbox, ledger, tmp_path):
    a, b, c = paid_orders(sandbox, 3)
    rows = [[a, "o-1111", "", "", ""], [b, "o-5555", "", "", ""], [c, "o-7777", "", "", ""]]
    _, tracked = await run_refunds(
        write_refunds(tmp_path / "r.csv", rows), sandbox, ledger, deadline=2
    )
    assert tracked.counts == {"FAILED": 1, "PENDING": 1, "COMPLETED": 1}
    assert tracked.pending_external_ids == ["o-5555"]


async def test_a_canceled_refund_says_so_in_the_report_findings(sandbox, ledger, tmp_path):
    # Its findings cell was empty, as a COMPLETED row's is; a failed one said "refund failed".
    a, b = paid_orders(sandbox, 2)
    rows = [[a, "o-3333", "", "", ""], [b, "o-1111", "", "", ""]]
    prepared, _ = await run_refunds(write_refunds(tmp_path / "r.csv", rows), sandbox, ledger)
    said = {view.external_id: findings(view) for view in ledger.refunds.rows(prepared.batch_id)}
    assert said == {
        "o-3333": f"refund canceled; {NO_REFUND_REASON}",
        "o-1111": f"refund failed; {NO_REFUND_REASON}",
    }
