"""Signed webhooks to a real receiver on 127.0.0.1: delivery, retries and the webhook faults."""

from __future__ import annotations

import httpx
import pytest
from sandbox_support import payout_body, wait_for
from support.stats import sandbox_stats
from support.waiting import sandbox_is_idle, wait_until


def _payout(sandbox, receiver, last4: str = "0001", **changes) -> dict:
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}) as api:
        body = payout_body(last4, callbackUrl=receiver.url, **changes)
        response = api.post("/v1/payouts", json=body)
        assert response.status_code == 201
        return response.json()


def _statuses(received) -> list[str]:
    return [hook.json()["status"] for hook in received]


def test_processing_and_final_are_sent_signed_and_created_is_not(sandbox, receiver):
    payout = _payout(sandbox, receiver)

    received = receiver.wait(2)

    assert _statuses(received) == ["PROCESSING", "COMPLETED"]
    for hook in received:
        assert hook.headers["X-Type"] == "PAYOUT_UPDATE"
        assert hook.signed_by(sandbox.token)
        assert not hook.signed_by("another-token")
        assert hook.json()["id"] == payout["id"]
    assert received[1].json()["completedAt"] is not None


def test_merchant_settings_address_is_used_when_payout_has_none(make_sandbox, receiver):
    sandbox = make_sandbox(merchant_callback_url=receiver.url)
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}) as api:
        api.post("/v1/payouts", json=payout_body("1111"))

    received = receiver.wait(2)

    assert _statuses(received) == ["PROCESSING", "FAILED"]
    assert received[1].json()["statusMessage"] == "Recipient account is blocked"


def test_correction_of_6666_sends_no_webhook(sandbox, receiver):
    payout = _payout(sandbox, receiver, "6666")
    receiver.wait(2)
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}) as api:
        wait_for(api, f"/v1/payouts/{payout['id']}", lambda p: p["status"] == "FAILED")

    wait_until(lambda: sandbox_is_idle(sandbox_stats(sandbox)), what="the sandbox to go idle")
    assert _statuses(receiver.received) == ["PROCESSING", "COMPLETED"]


def test_failed_delivery_is_retried_with_backoff(make_sandbox, receiver):
    sandbox = make_sandbox(webhook_backoff=0.1, final_delay=2.0)
    receiver.fail_first = 2

    _payout(sandbox, receiver, "5555")
    received = receiver.wait(1)

    first, second = receiver.refused
    assert _statuses(received) == ["PROCESSING"]
    assert second - first >= 0.09  # first retry after webhook_backoff
    assert received[0].at - second >= 0.19  # then twice as long
    assert sandbox_stats(sandbox)["webhooks"]["attempts"] == 3


def test_delivery_gives_up_after_max_attempts(make_sandbox, receiver):
    sandbox = make_sandbox(webhook_max_attempts=3, webhook_backoff=0.02)
    receiver.fail_first = 100

    _payout(sandbox, receiver, "5555")
    with httpx.Client() as plain:
        wait_for(plain, f"{sandbox.url}/_sandbox/stats", lambda s: s["webhooks"]["failed"] == 1)

    assert len(receiver.refused) == 3


# https goes through httpx, plain http through the sandbox's kept-alive poster.
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_unreachable_address_is_retried_then_abandoned(make_sandbox, scheme):
    sandbox = make_sandbox(webhook_max_attempts=2, webhook_backoff=0.02)
    address = f"{scheme}://127.0.0.1:9/x"  # nothing listens there
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}) as api:
        api.post("/v1/payouts", json=payout_body("5555", callbackUrl=address))
        wait_for(api, f"{sandbox.url}/_sandbox/stats", lambda s: s["webhooks"]["failed"] == 1)

    assert sandbox_stats(sandbox)["webhooks"]["attempts"] == 2


def test_dropped_webhooks_never_arrive(make_sandbox, receiver):
    sandbox = make_sandbox(webhook_drop_rate=1.0)
    payout = _payout(sandbox, receiver)
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}) as api:
        wait_for(api, f"/v1/payouts/{payout['id']}", lambda p: p["status"] == "COMPLETED")

    wait_until(lambda: sandbox_is_idle(sandbox_stats(sandbox)), what="the sandbox to go idle")
    assert receiver.received == []
    assert sandbox_stats(sandbox)["webhooks"]["dropped"] == 2


def test_duplicated_webhooks_arrive_twice(make_sandbox, receiver):
    sandbox = make_sandbox(webhook_duplicate_rate=1.0)
    _payout(sandbox, receiver)

    received = receiver.wait(4)

    # Deliveries run concurrently, so under load they may land in any order: compare as a multiset.
    assert sorted(_statuses(received)) == ["COMPLETED", "COMPLETED", "PROCESSING", "PROCESSING"]
    assert len({hook.body for hook in received}) == 2


def test_reordered_webhooks_deliver_final_before_processing(make_sandbox, receiver):
    sandbox = make_sandbox(webhook_reorder_rate=1.0)
    _payout(sandbox, receiver, "2222")

    received = receiver.wait(2)

    assert _statuses(received) == ["FAILED", "PROCESSING"]
    assert all(hook.signed_by(sandbox.token) for hook in received)


def test_bad_signature_webhooks_do_not_verify(make_sandbox, receiver):
    sandbox = make_sandbox(webhook_bad_signature_rate=1.0)
    _payout(sandbox, receiver)

    received = receiver.wait(2)

    assert not any(hook.signed_by(sandbox.token) for hook in received)
    assert all(len(hook.headers["X-Signature"]) == 128 for hook in received)
