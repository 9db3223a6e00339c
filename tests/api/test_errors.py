"""One function maps an answer to its error class; the service's message is found robustly."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from payflow.api.errors import (
    AmbiguousError,
    AuthError,
    ConflictError,
    ConnectFailedError,
    NotFoundError,
    PaymentsApiError,
    RateLimitedError,
    RejectedError,
    ServerError,
    SignatureInvalidError,
    UnexpectedResponseError,
    error_from_response,
    is_ambiguous_for_create,
    parse_retry_after,
    service_message,
)


def _response(status: int, body: object = None, **headers: str) -> httpx.Response:
    if isinstance(body, str):
        return httpx.Response(status, text=body, headers=headers)
    return httpx.Response(status, json=body, headers=headers)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, RejectedError),
        (401, AuthError),
        (403, AuthError),
        (404, NotFoundError),
        (409, ConflictError),
        (422, RejectedError),
        (429, RateLimitedError),
        (500, ServerError),
        (502, ServerError),
        (503, ServerError),
        (302, UnexpectedResponseError),
    ],
)
def test_each_status_maps_to_its_class(status, expected):
    error = error_from_response(_response(status, {"message": "nope"}), call_name="get_payout")
    assert type(error) is expected
    assert str(error).startswith(f"get_payout: HTTP {status}")


def test_rejected_error_carries_status_and_service_message():
    error = error_from_response(_response(400, {"message": "amount invalid"}), call_name="x")
    assert isinstance(error, RejectedError)
    assert error.status_code == 400
    assert error.message == "x: HTTP 400: amount invalid"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"message": "m1"}, "m1"),
        ({"detail": "m2"}, "m2"),
        ({"error": "m3"}, "m3"),
        ({"error": {"code": "E", "message": "m4"}}, "m4"),
        ({"errors": [{"message": "a"}, {"message": "b"}]}, "a; b"),
        ({"errors": ["first", "second"]}, "first; second"),
        ({"detail": [{"loc": ["body", "amount"], "msg": "too big"}]}, "amount: too big"),
        ({"code": 17}, '{"code":17}'),
        ("plain\n text  error", "plain text error"),
    ],
)
def test_service_message_found_in_common_shapes(body, message):
    assert service_message(_response(400, body)) == message


def test_service_message_is_truncated_to_one_line():
    text = service_message(_response(500, "<html>" + "x" * 5000 + "</html>"))
    assert len(text) == 300
    assert text.endswith("…")


def test_retry_after_in_seconds_and_as_http_date():
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 01 May 2024 12:00:07 GMT", now=now) == 7.0
    assert parse_retry_after("Wed, 01 May 2024 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_rate_limited_error_parses_retry_after():
    error = error_from_response(_response(429, {}, **{"Retry-After": "2"}), call_name="x")
    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 2.0
    assert error.status_code == 429


@pytest.mark.parametrize(
    ("error", "needs_lookup"),
    [
        (AmbiguousError("timeout"), True),
        (UnexpectedResponseError("garbled"), True),
        (ConnectFailedError("refused"), True),
        (ServerError("500", status_code=500), True),
        (RateLimitedError("429", retry_after=1), True),
        (ConflictError("409", status_code=409), True),
        (RejectedError("400", status_code=400), False),
        (AuthError("401", status_code=401), False),
        (NotFoundError("404", status_code=404), False),
        (SignatureInvalidError("bad"), False),
        (ValueError("not ours"), False),
    ],
)
def test_which_create_errors_need_a_lookup_by_external_id(error, needs_lookup):
    assert is_ambiguous_for_create(error) is needs_lookup


def test_every_error_is_a_payments_api_error():
    error = error_from_response(_response(418, "teapot"), call_name="x")
    assert isinstance(error, PaymentsApiError)
    assert repr(error) == "RejectedError('x: HTTP 418: teapot')"


def test_service_message_never_repeats_the_token_or_requisites_it_echoes():
    request = httpx.Request(
        "POST", "https://api.example/v1/payouts", headers={"X-Api-Token": "tk-9"}
    )
    body = {"message": "token tk-9 may not pay account 40817810899910004312"}
    response = httpx.Response(403, json=body, request=request)
    assert service_message(response) == "token [token] may not pay account ****************4312"
    assert "tk-9" not in str(error_from_response(response, call_name="create_payout"))
    assert service_message(_response(400, {"message": "limit 100000000 exceeded"})).endswith(
        "100000000 exceeded"
    )
