"""Client behaviour over httpx.MockTransport: headers, bodies, paths, error mapping, retries."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from decimal import Decimal

import httpx
import pytest
from api_support import FAST_RETRY, PAYOUT_JSON, TOKEN, PinnedRetry, payout_request

from payflow.api import AsyncPayoutsClient, PayoutsClient
from payflow.api.calls import UnusablePathSegment
from payflow.api.errors import (
    AmbiguousError,
    AuthError,
    ConflictError,
    ConnectFailedError,
    NotFoundError,
    RateLimitedError,
    RejectedError,
    ServerError,
    UnexpectedResponseError,
)

Handler = Callable[[httpx.Request], httpx.Response]


def sync_client(handler: Handler, **options) -> PayoutsClient:
    options.setdefault("retry", FAST_RETRY)
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return PayoutsClient(TOKEN, base_url="http://api.test/", http_client=http, **options)


def async_client(handler: Handler, **options) -> AsyncPayoutsClient:
    options.setdefault("retry", FAST_RETRY)
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return AsyncPayoutsClient(TOKEN, base_url="http://api.test", http_client=http, **options)


class Recorder:
    """A handler answering from a list of responses (the last one repeats), keeping requests."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_every_request_carries_the_token_and_a_timeout():
    recorder = Recorder(httpx.Response(200, json=PAYOUT_JSON))
    with sync_client(recorder, timeout=7.5) as client:
        client.create_payout(payout_request())
        client.get_payout("p-1")
    for request in recorder.requests:
        assert request.headers["X-Api-Token"] == TOKEN
        assert request.extensions["timeout"] == {
            "connect": 7.5,
            "read": 7.5,
            "write": 7.5,
            "pool": 7.5,
        }
    assert recorder.requests[0].headers["Content-Type"] == "application/json"
    assert "Content-Type" not in recorder.requests[1].headers


def test_create_payout_sends_amount_as_an_exact_json_number():
    recorder = Recorder(httpx.Response(200, json=PAYOUT_JSON))
    with sync_client(recorder) as client:
        payout = client.create_payout(payout_request(amount="12345678901234567.89"))
    sent = recorder.requests[0].content
    assert b'"amount":12345678901234567.89' in sent
    assert json.loads(sent)["account"]["bankName"] == "bank-a"
    assert payout.amount == Decimal("100.50")
    assert payout.created_at is not None and payout.created_at.tzinfo is not None


def test_path_segments_are_escaped():
    recorder = Recorder(httpx.Response(200, json=PAYOUT_JSON), httpx.Response(200, json=[]))
    with sync_client(recorder) as client:
        client.get_payout_by_external_id("a/b?c#d %")
        client.list_banks("+79001234567")
    assert recorder.requests[0].url.raw_path == b"/v1/payouts/external/a%2Fb%3Fc%23d%20%25"
    assert recorder.requests[1].url.params["account"] == "+79001234567"


def test_a_path_requested_again_gets_its_own_query_and_the_same_url():
    # The client parses each path's URL once (core.URL_CACHE_SIZE); queries stay per request.
    recorder = Recorder(httpx.Response(200, json=[]))
    http = httpx.Client(transport=httpx.MockTransport(recorder))
    with PayoutsClient(TOKEN, base_url="http://api.test/v2/", http_client=http) as client:
        client.list_banks("79001234567")
        client.list_banks("79007654321")
        client.list_services()
        client.list_banks("79001234567")
        cached = [str(url) for url in client._core._urls.values()]
    assert [str(r.url) for r in recorder.requests] == [
        "http://api.test/v2/v1/payouts/banks?account=79001234567",
        "http://api.test/v2/v1/payouts/banks?account=79007654321",
        "http://api.test/v2/v1/payouts/services",
        "http://api.test/v2/v1/payouts/banks?account=79001234567",
    ]
    assert cached == [
        "http://api.test/v2/v1/payouts/banks",
        "http://api.test/v2/v1/payouts/services",
    ]
    assert all(TOKEN not in url for url in cached)


def test_parsed_urls_kept_stay_bounded(monkeypatch):
    monkeypatch.setattr("payflow.api.core.URL_CACHE_SIZE", 3)
    recorder = Recorder(httpx.Response(200, json=PAYOUT_JSON))
    with sync_client(recorder) as client:
        for n in range(10):
            client.get_payout(f"p-{n}")
        assert len(client._core._urls) <= 3
    assert [r.url.path for r in recorder.requests] == [f"/v1/payouts/p-{n}" for n in range(10)]


@pytest.mark.parametrize("bad", ["", "..", "."])
def test_empty_or_dot_identifiers_are_refused_before_sending(bad):
    recorder = Recorder(httpx.Response(200, json=PAYOUT_JSON))
    with sync_client(recorder) as client, pytest.raises(UnusablePathSegment):
        client.get_payout_by_external_id(bad)
    assert recorder.requests == []


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (" ", b"%20"),
        (" x ", b"%20x%20"),
        ("...", b"..."),
        ("a/b", b"a%2Fb"),
        ("%2F", b"%252F"),
        ("?x", b"%3Fx"),
        ("#", b"%23"),
        ("ü/√", b"%C3%BC%2F%E2%88%9A"),
        ("a;b=c&d+e", b"a%3Bb%3Dc%26d%2Be"),
    ],
)
def test_every_caller_value_is_one_percent_encoded_segment(value, path):
    recorder = Recorder(httpx.Response(200, json=PAYOUT_JSON))
    with sync_client(recorder) as client:
        client.get_payout_by_external_id(value)
        client.get_payout(value)
        client.get_refund_by_external_id(value)
        client.get_order(value)
    raw = [r.url.raw_path for r in recorder.requests]
    assert raw == [
        b"/v1/payouts/external/" + path,
        b"/v1/payouts/" + path,
        b"/v1/refunds/external/" + path,
        b"/v1/orders/" + path,
    ]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, RejectedError),
        (401, AuthError),
        (403, AuthError),
        (404, NotFoundError),
        (409, ConflictError),
        (429, RateLimitedError),
        (500, ServerError),
        (503, ServerError),
    ],
)
def test_post_errors_are_mapped_and_never_retried(status, error):
    recorder = Recorder(httpx.Response(status, json={"message": "why"}))
    with sync_client(recorder) as client, pytest.raises(error) as caught:
        client.create_payout(payout_request())
    assert len(recorder.requests) == 1
    assert "why" in str(caught.value)


def test_get_retries_transient_errors_then_succeeds():
    recorder = Recorder(
        httpx.Response(503),
        httpx.Response(429, headers={"Retry-After": "0"}),
        httpx.ConnectError("refused"),
        httpx.Response(200, json=PAYOUT_JSON),
    )
    with sync_client(recorder) as client:
        assert client.get_payout("p-1").status == "CREATED"
    assert len(recorder.requests) == 4


def test_get_gives_up_after_max_retries():
    recorder = Recorder(httpx.Response(500))
    with sync_client(recorder) as client, pytest.raises(ServerError):
        client.get_payout("p-1")
    assert len(recorder.requests) == FAST_RETRY.max_retries + 1


def test_get_does_not_retry_permanent_errors():
    recorder = Recorder(httpx.Response(400, json={"detail": "bad id"}))
    with sync_client(recorder) as client, pytest.raises(RejectedError):
        client.get_payout("p-1")
    assert len(recorder.requests) == 1


def test_retry_after_longer_than_the_cap_is_not_waited_for():
    recorder = Recorder(httpx.Response(429, headers={"Retry-After": "3600"}))
    with sync_client(recorder) as client, pytest.raises(RateLimitedError) as caught:
        client.get_balance()
    assert caught.value.retry_after == 3600
    assert len(recorder.requests) == 1


def test_backoff_is_exponential_capped_and_honours_retry_after():
    policy = PinnedRetry(base_delay=0.5, max_delay=3.0, max_retry_after=60.0)
    server = ServerError("x", status_code=503)
    assert [policy.delay(server, n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.delay(RateLimitedError("x", retry_after=10.0), 1) == 10.0
    assert policy._should_retry("GET", server, 1)
    assert not policy._should_retry("POST", server, 1)
    assert not policy._should_retry("GET", server, 4)


def test_default_jitter_spreads_within_half_to_full_backoff():
    from payflow.api.retry import RetryPolicy

    policy = RetryPolicy(base_delay=1.0, max_delay=1.0)
    delays = {policy.delay(ServerError("x", status_code=500), 1) for _ in range(50)}
    assert all(0.5 <= d < 1.0 for d in delays)
    assert len(delays) > 1


def test_transport_failures_map_to_connect_failed_or_ambiguous():
    cases = [
        (httpx.ConnectError("refused"), ConnectFailedError),
        (httpx.ConnectTimeout("slow connect"), ConnectFailedError),
        (httpx.ReadTimeout("slow answer"), AmbiguousError),
        (httpx.RemoteProtocolError("peer closed"), AmbiguousError),
        (httpx.ReadError("reset"), AmbiguousError),
    ]
    for failure, expected in cases:
        recorder = Recorder(failure)
        with sync_client(recorder) as client, pytest.raises(expected) as caught:
            client.create_payout(payout_request())
        assert len(recorder.requests) == 1
        assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_find_by_external_id_returns_none_on_404_and_get_raises():
    recorder = Recorder(httpx.Response(404, json={"message": "not found"}))
    with sync_client(recorder) as client:
        assert client.find_payout_by_external_id("ext-9") is None
        with pytest.raises(NotFoundError):
            client.get_payout_by_external_id("ext-9")


def test_unreadable_success_is_unexpected_and_hides_the_values():
    recorder = Recorder(httpx.Response(200, json={"id": "p", "amount": "79001234567x"}))
    with sync_client(recorder) as client, pytest.raises(UnexpectedResponseError) as caught:
        client.get_payout("p")
    assert "79001234567" not in str(caught.value)
    assert "status: missing" in str(caught.value)
    recorder = Recorder(httpx.Response(200, text="<html>oops</html>"))
    with sync_client(recorder) as client, pytest.raises(UnexpectedResponseError):
        client.create_payout(payout_request())


def test_unknown_status_and_fields_are_kept():
    recorder = Recorder(httpx.Response(200, json={**PAYOUT_JSON, "status": "ON_HOLD", "x": 1}))
    with sync_client(recorder) as client:
        payout = client.get_payout("p")
    assert payout.status == "ON_HOLD"
    assert payout.model_extra == {"x": 1}
    assert not payout.is_final


def test_lists_accept_an_array_or_a_wrapper():
    recorder = Recorder(
        httpx.Response(200, json=[{"id": "sber", "name": "Sber"}]),
        httpx.Response(200, json={"data": [{"id": 7, "name": "XOF Orange", "x": True}]}),
    )
    with sync_client(recorder) as client:
        assert [b.id for b in client.list_banks("79001234567")] == ["sber"]
        services = client.list_services()
    assert services[0].id == 7 and services[0].model_extra == {"x": True}


def test_token_stays_out_of_reprs_errors_and_logs(caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "payflow"):
        caplog.set_level(logging.DEBUG, logger=name)
    recorder = Recorder(
        httpx.Response(503, json={"message": "down"}),
        httpx.Response(503, json={"message": "down"}),
        httpx.Response(401, json={"message": "bad token"}),
    )
    with sync_client(recorder, retry=PinnedRetry(max_retries=1, base_delay=0.001)) as client:
        with pytest.raises(ServerError) as server_error:
            client.get_payout("p-1")
        with pytest.raises(AuthError) as auth_error:
            client.create_payout(payout_request())
        texts = [repr(client), str(client), repr(client._core)]
    for error in (server_error.value, auth_error.value):
        texts += [repr(error), str(error), repr(vars(error))]
    texts += [record.getMessage() for record in caplog.records]
    assert any("retrying" in text for text in texts)  # the logs were captured
    assert len(recorder.requests) == 3
    for text in texts:
        assert TOKEN not in text


async def test_async_client_shares_the_behaviour():
    recorder = Recorder(httpx.Response(500), httpx.Response(200, json=PAYOUT_JSON))
    async with async_client(recorder) as client:
        payout = await client.get_payout("p-1")
        assert payout.id == PAYOUT_JSON["id"]
        recorder.answers = [httpx.ReadTimeout("late")]
        with pytest.raises(AmbiguousError):
            await client.create_payout(payout_request())
    assert len(recorder.requests) == 3
    assert all(r.headers["X-Api-Token"] == TOKEN for r in recorder.requests)
    assert TOKEN not in repr(client)


def test_constructor_refuses_bad_settings():
    with pytest.raises(ValueError):
        PayoutsClient("", base_url="http://x")
    with pytest.raises(ValueError):
        PayoutsClient(TOKEN, base_url="x.example")
    with pytest.raises(ValueError):
        AsyncPayoutsClient(TOKEN, base_url="http://x", max_in_flight=0)
