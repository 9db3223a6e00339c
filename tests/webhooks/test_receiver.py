"""Must show: forged or tampered webhooks are refused; duplicates and late ones change nothing;
with the receiver down, polling alone finishes the batch."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import socket

import httpx
from paying_support import register, rows, states, unique
from sqlalchemy import Engine, event

from payflow.ledger import RowState
from payflow.paying import submit_batch, track_batch
from payflow.webhooks import WebhookReceiver
from payflow.webhooks.app import MAX_BODY_BYTES

FAST_TRACK = {"deadline": 30, "poll_interval": 0.05, "quiet_period": 0.05}


def _signature(body: bytes, key: str) -> str:
    # Written from the spec (HMAC-SHA512, lowercase hex, key = API token), not from our code.
    return hmac.new(key.encode(), body, hashlib.sha512).hexdigest()


async def _paid_row(client, ledger, sandbox):
    """One row paid and polled to COMPLETED; returns (batch_id, external_id, payout json)."""
    [one] = rows(unique("wh"), 1)
    batch_id = register(ledger, [one])
    await submit_batch(client, ledger, batch_id, worker_id="w", chunk_size=10, callback_url=None)
    await track_batch(client, ledger, batch_id, **FAST_TRACK)
    payout = httpx.get(
        f"{sandbox.url}/v1/payouts/external/{one.external_id}",
        headers={"X-Api-Token": sandbox.token},
    ).json()
    assert payout["status"] == RowState.COMPLETED.value
    return batch_id, one.external_id, payout


def _event(payout: dict, external_id: str, status: str) -> bytes:
    return json.dumps({**payout, "externalId": external_id, "status": status}).encode()


def _post(receiver, body: bytes, signature: str | None, kind: str = "PAYOUT_UPDATE"):
    headers = {"Content-Type": "application/json", "X-Type": kind}
    if signature is not None:
        headers["X-Signature"] = signature
    return httpx.post(receiver.url, content=body, headers=headers, timeout=5)


async def test_forged_tampered_or_unsigned_webhooks_are_refused(
    sandbox, client, ledger, ledger_url
):
    batch_id, external_id, payout = await _paid_row(client, ledger, sandbox)
    before = ledger.status_events(external_id)
    failed = _event(payout, external_id, "FAILED")
    with WebhookReceiver(ledger_url, sandbox.token) as receiver:
        forged = _post(receiver, failed, _signature(failed, "someone-else's-token"))
        genuine = _event(payout, external_id, "COMPLETED")
        tampered = _post(receiver, failed, _signature(genuine, sandbox.token))
        unsigned = _post(receiver, failed, None)
    assert [forged.status_code, tampered.status_code, unsigned.status_code] == [401] * 3
    assert sandbox.token not in forged.text
    assert states(ledger, batch_id)[external_id] == RowState.COMPLETED.value
    assert ledger.status_events(external_id) == before


async def test_a_body_over_the_limit_is_refused_unread(sandbox, client, ledger, ledger_url):
    # The receiver faces the internet and reads a body before it can check its signature: one
    # 400 MB POST took 900 MB of memory. Over the limit it is refused, signed or not, whether
    # its size is declared (Content-Length) or only streamed (chunked).
    batch_id, external_id, payout = await _paid_row(client, ledger, sandbox)
    before = ledger.status_events(external_id)
    padded = _event(payout, external_id, "FAILED") + b" " * MAX_BODY_BYTES
    chunks = [b"x" * 65536] * 128  # 8 MB, no Content-Length

    def streamed():
        yield from chunks

    with WebhookReceiver(ledger_url, sandbox.token) as receiver:
        declared = _post(receiver, padded, _signature(padded, sandbox.token))
        chunked = httpx.post(receiver.url, content=streamed(), headers={"X-Signature": "0" * 128})
        assert [declared.status_code, chunked.status_code] == [413, 413]
        assert "chunked" in chunked.request.headers.get("transfer-encoding", "")
        assert ledger.status_events(external_id) == before
        fine = _post(receiver, padded.rstrip(), _signature(padded.rstrip(), sandbox.token))
    assert fine.status_code == 200  # the same event at its own size is read as ever
    assert states(ledger, batch_id)[external_id] == RowState.FAILED.value


async def test_duplicate_and_late_webhooks_change_nothing(sandbox, client, ledger, ledger_url):
    batch_id, external_id, payout = await _paid_row(client, ledger, sandbox)
    before = ledger.status_events(external_id)
    with WebhookReceiver(ledger_url, sandbox.token) as receiver:
        answers = [
            _post(receiver, body, _signature(body, sandbox.token))
            for body in (
                _event(payout, external_id, "COMPLETED"),  # duplicate
                _event(payout, external_id, "COMPLETED"),
                _event(payout, external_id, "PROCESSING"),  # late
            )
        ]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert states(ledger, batch_id)[external_id] == RowState.COMPLETED.value
    assert ledger.status_events(external_id) == before


async def test_signed_webhook_for_an_unknown_payout_is_accepted_and_ignored(
    sandbox, client, ledger, ledger_url
):
    _, _, payout = await _paid_row(client, ledger, sandbox)
    stranger = _event({**payout, "id": "00000000-0000-4000-8000-000000000000"}, "nobody", "FAILED")
    other_kind = b'{"id": "x", "status": "REFUNDED"}'
    with WebhookReceiver(ledger_url, sandbox.token) as receiver:
        unknown = _post(receiver, stranger, _signature(stranger, sandbox.token))
        refund = _post(receiver, other_kind, _signature(other_kind, sandbox.token), "REFUND_UPDATE")
    assert unknown.status_code in (200, 202) and refund.status_code == 200
    assert unknown.json()["recorded"] is False and refund.json()["recorded"] is False


async def test_webhooks_from_the_sandbox_are_recorded(sandbox, client, ledger, ledger_url):
    batch = rows(unique("live"), 10)
    batch_id = register(ledger, batch)
    with WebhookReceiver(ledger_url, sandbox.token) as receiver:
        await submit_batch(
            client, ledger, batch_id, worker_id="w", chunk_size=10, callback_url=receiver.url
        )
        # Polling waits far longer than the test: only webhooks can finish these rows.
        result = await track_batch(
            client, ledger, batch_id, deadline=20, poll_interval=0.05, quiet_period=600
        )
    assert result.all_final
    sources = {e.source for r in batch for e in ledger.status_events(r.external_id)}
    assert "webhook" in sources and "poll" not in sources


async def test_with_the_receiver_down_polling_finishes_the_batch(sandbox, client, ledger):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead_url = f"http://127.0.0.1:{closed.getsockname()[1]}/webhooks"
    batch = rows(unique("down"), 10)
    batch_id = register(ledger, batch)
    await submit_batch(
        client, ledger, batch_id, worker_id="w", chunk_size=10, callback_url=dead_url
    )
    result = await track_batch(client, ledger, batch_id, **FAST_TRACK)
    assert result.all_final and not result.timed_out
    assert set(states(ledger, batch_id).values()) == {RowState.COMPLETED.value}


async def test_a_burst_of_webhooks_is_stored_in_fewer_transactions(
    sandbox, client, ledger, ledger_url
):
    batch = rows(unique("burst"), 60)
    batch_id = register(ledger, batch)
    await submit_batch(client, ledger, batch_id, worker_id="w", chunk_size=60, callback_url=None)
    by_external_id = {view.external_id: view.payout_id for view in ledger.batch_rows(batch_id)}
    bodies = []
    for one in batch:
        payout = {"id": by_external_id[one.external_id], "amount": "1", "currency": "RUB"}
        bodies += [_event(payout, one.external_id, s) for s in ("PROCESSING", "COMPLETED")]
    commits = 0

    def count(connection) -> None:
        nonlocal commits
        commits += connection.engine.url.render_as_string() == ledger_url

    event.listen(Engine, "commit", count)
    try:
        with WebhookReceiver(ledger_url, sandbox.token) as receiver:
            async with httpx.AsyncClient(timeout=30) as http:
                answers = await asyncio.gather(
                    *(
                        http.post(
                            receiver.url,
                            content=body,
                            headers={"X-Signature": _signature(body, sandbox.token)},
                        )
                        for body in bodies
                    )
                )
    finally:
        event.remove(Engine, "commit", count)
    assert [a.status_code for a in answers] == [200] * len(bodies)
    # Each answer came after its event was stored: the ledger has them all now.
    assert set(states(ledger, batch_id).values()) == {RowState.COMPLETED.value}
    assert sum(a.json()["recorded"] for a in answers) >= len(batch)
    assert commits < len(bodies) / 2, f"{commits} commits for {len(bodies)} webhooks"
