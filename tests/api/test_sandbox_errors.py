"""Each error class raised by the matching sandbox fault, over real HTTP, sync and async."""

from __future__ import annotations

import logging
import uuid
from decimal import Decimal

import pytest
from api_sandbox_support import EitherClient
from api_support import PinnedRetry, payout_request
from support.stats import sandbox_stats, set_faults

from payflow.api import AsyncPayoutsClient, PayoutsClient
from payflow.api.errors import (
    AmbiguousError,
    AuthError,
    ConflictError,
    ConnectFailedError,
    NotFoundError,
    RateLimitedError,
    RejectedError,
    ServerError,
    is_ambiguous_for_create,
)

RETRY = PinnedRetry(max_retries=2, base_delay=0.01, max_delay=0.05, max_retry_after=0.5)


@pytest.fixture(params=["sync", "async"])
async def connect(request):
    """`connect(server, **options)` -> an EitherClient of the parametrised kind."""
    clients: list[EitherClient] = []
    kind = PayoutsClient if request.param == "sync" else AsyncPayoutsClient

    def make(server, token=None, **options) -> EitherClient:
        options.setdefault("timeout", 5.0)
        options.setdefault("retry", RETRY)
        client = EitherClient(kind(token or server.token, base_url=server.url, **options))
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def sbp(api, external_id: str):
    banks = await api.list_banks("79001234567")
    return payout_request(external_id, bank_name=banks[0].id)


def retries_logged(caplog) -> int:
    return sum("retrying" in r.getMessage() for r in caplog.records if r.name == "payflow.api")


async def test_server_errors_are_retried_on_get_then_raised(sandbox_server, connect, caplog):
    api = connect(sandbox_server)
    request = await sbp(api, f"e5-{uuid.uuid4().hex}")
    set_faults(sandbox_server, error_rate=1.0)
    with pytest.raises(ServerError) as caught:
        await api.get_balance()
    assert caught.value.status_code in (500, 503)
    assert retries_logged(caplog) == RETRY.max_retries
    with pytest.raises(ServerError) as on_post:
        await api.create_payout(request)
    assert retries_logged(caplog) == RETRY.max_retries  # the POST was sent once
    assert is_ambiguous_for_create(on_post.value)
    set_faults(sandbox_server, error_rate=0.0)
    assert await api.find_payout_by_external_id(request.external_id) is None


async def test_rate_limit_gives_retry_after(sandbox_server, connect, caplog):
    api = connect(sandbox_server)
    set_faults(sandbox_server, rate_limit_rate=1.0, retry_after=1)
    with pytest.raises(RateLimitedError) as caught:
        await api.get_payout(str(uuid.uuid4()))
    assert caught.value.retry_after == 1.0 and caught.value.status_code == 429
    assert retries_logged(caplog) == 0  # 1 s is above this client's cap: the caller decides
    set_faults(sandbox_server, retry_after=0)
    with pytest.raises(RateLimitedError):
        await api.list_services()
    assert retries_logged(caplog) == RETRY.max_retries


async def test_lost_response_on_create_is_ambiguous_and_resolved_by_lookup(make_sandbox, connect):
    server = make_sandbox(lost_response_rate=1.0)
    api = connect(server)
    request = await sbp(api, f"lost-{uuid.uuid4().hex}")
    with pytest.raises(AmbiguousError) as caught:
        await api.create_payout(request)
    assert is_ambiguous_for_create(caught.value)
    found = await api.find_payout_by_external_id(request.external_id)
    assert found is not None and found.external_id == request.external_id
    assert sandbox_stats(server)["createAttempts"][request.external_id] == 1


async def test_latency_beyond_the_timeout_is_ambiguous_on_post(sandbox_server, connect):
    api = connect(sandbox_server, timeout=0.2)
    request = await sbp(api, f"slow-{uuid.uuid4().hex}")
    set_faults(sandbox_server, latency=0.5)
    with pytest.raises(AmbiguousError, match="ReadTimeout"):
        await api.create_payout(request)
    with pytest.raises(AmbiguousError):
        await api.get_balance()  # a GET is retried, then gives up the same way
    set_faults(sandbox_server, latency=0.0)


async def test_wrong_token_is_auth_error(sandbox_server, connect):
    api = connect(sandbox_server, token="wrong-token")
    with pytest.raises(AuthError) as caught:
        await api.get_balance()
    assert caught.value.status_code == 401
    assert "X-Api-Token" in caught.value.message  # the sandbox's own words
    assert "wrong-token" not in str(caught.value)


async def test_unknown_payout_is_not_found(sandbox_server, connect):
    api = connect(sandbox_server)
    with pytest.raises(NotFoundError, match="payout not found"):
        await api.get_payout(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        await api.get_payout_by_external_id("never-sent")


async def test_reused_external_id_is_conflict_and_pays_once(sandbox_server, connect):
    api = connect(sandbox_server)
    request = await sbp(api, f"dup-{uuid.uuid4().hex}")
    await api.create_payout(request)
    with pytest.raises(ConflictError, match="already exists") as caught:
        await api.create_payout(request)
    assert is_ambiguous_for_create(caught.value)
    counts = sandbox_stats(sandbox_server)
    assert counts["createAttempts"][request.external_id] == 2
    assert counts["payoutsByExternalId"][request.external_id] == 1


async def test_broken_rule_is_rejected_with_the_sandbox_message(sandbox_server, connect):
    api = connect(sandbox_server)
    request = await sbp(api, f"bad-{uuid.uuid4().hex}")
    bad = request.model_validate({**request.to_body(), "amount": "10.001"})
    with pytest.raises(RejectedError) as caught:
        await api.create_payout(bad)
    assert type(caught.value) is RejectedError and caught.value.status_code == 400
    assert "more than 2 digits" in caught.value.message
    assert not is_ambiguous_for_create(caught.value)


async def test_nothing_listening_is_connect_failed(make_sandbox, connect):
    server = make_sandbox()
    server.stop()
    api = connect(server)
    with pytest.raises(ConnectFailedError):
        await api.get_balance()
    with pytest.raises(ConnectFailedError):
        await api.create_payout(payout_request(f"down-{uuid.uuid4().hex}"))


async def test_token_absent_from_real_http_logs(sandbox_server, connect, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "aiohttp", "payflow"):
        caplog.set_level(logging.DEBUG, logger=name)
    api = connect(sandbox_server)
    await api.get_balance()
    await api.list_banks("79001239876")
    set_faults(sandbox_server, error_rate=1.0)
    with pytest.raises(ServerError) as caught:
        await api.get_balance()
    # The client's own request lines really captured (the async client's wire is aiohttp's).
    assert any(r.name == "httpx" and "HTTP Request" in r.getMessage() for r in caplog.records)
    texts = [r.getMessage() for r in caplog.records] + [repr(caught.value), repr(api.client)]
    assert all(sandbox_server.token not in text for text in texts)
    assert all("7900123" not in text for text in texts)  # the recipient phone, masked
    assert any("account=%2A%2A%2A%2A%2A%2A%2A9876" in text for text in texts)


async def test_a_balance_too_low_names_its_amount_whole(make_sandbox, connect):
    # The sandbox's 409 reads "balance RUB 1250000000.00 does not cover the payout"; the amount,
    # ten digits, was masked as if it were an account, and the operator could not read it.
    sandbox = make_sandbox(balances={"RUB": Decimal("1250000000.00")})
    api = connect(sandbox)
    request = await sbp(api, f"big-{uuid.uuid4().hex}")
    too_big = request.model_copy(update={"amount": Decimal("2000000000.00")})
    with pytest.raises(ConflictError) as caught:
        await api.create_payout(too_big)
    assert "balance RUB 1250000000.00 does not cover the payout" in caught.value.message
