"""The sandbox's real signed webhooks, received over HTTP and read by the client's parser."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from api_sandbox_support import webhook_receiver
from api_support import payout_request

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import SignatureInvalidError
from payflow.api.webhooks import parse_payout_webhook


async def _payout_webhooks(server, url, received, requisites: str, count: int):
    async with AsyncPayoutsClient(server.token, base_url=server.url, timeout=5.0) as client:
        banks = await client.list_banks(requisites)
        request = payout_request(f"hook-{uuid.uuid4().hex}", requisites=requisites)
        request = request.model_copy(update={"callback_url": url})
        request.account.bank_name = banks[0].id
        created = await client.create_payout(request)
    deadline = time.monotonic() + 5.0
    while len(received.snapshot()) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"only {len(received.snapshot())} of {count} webhooks arrived")
        await asyncio.sleep(0.02)
    return created, received.snapshot()


async def test_payout_webhooks_verify_and_parse(make_sandbox):
    server = make_sandbox()
    with webhook_receiver() as (url, received):
        created, hooks = await _payout_webhooks(server, url, received, "79001231111", 2)
    events = [parse_payout_webhook(body, headers, server.token) for headers, body in hooks]
    assert [e.status for e in events] == ["PROCESSING", "FAILED"]
    assert {e.payout_id for e in events} == {created.id}
    assert {e.external_id for e in events} == {created.external_id}
    assert events[-1].status_message == "Recipient account is blocked"
    assert all(e.event_type == "PAYOUT_UPDATE" for e in events)


async def test_badly_signed_sandbox_webhooks_are_refused(make_sandbox):
    server = make_sandbox(webhook_bad_signature_rate=1.0)
    with webhook_receiver() as (url, received):
        _, hooks = await _payout_webhooks(server, url, received, "79001234567", 1)
    headers, body = hooks[0]
    with pytest.raises(SignatureInvalidError):
        parse_payout_webhook(body, headers, server.token)
