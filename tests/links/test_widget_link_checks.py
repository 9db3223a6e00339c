"""The sandbox widget's link checks and calls over HTTP, with links signed independently here
(standard-library hmac), and the client's signing checked against the same HMAC."""

from __future__ import annotations

import base64
import json
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from widget_support import hmac_hex, payload_dict, requisites, signed_query, widget_url

from payflow.api.signing import sign, widget_link
from payflow.api.widget import WidgetPayload


def state_of_page(html: str) -> dict:
    start = html.index('id="widget-state">') + len('id="widget-state">')
    return json.loads(html[start : html.index("</script>", start)])


def test_client_signature_is_the_independent_hmac_of_the_payload_string(sandbox_server) -> None:
    payload = WidgetPayload.model_validate(payload_dict(sandbox_server.merchant_id))
    link = widget_link(sandbox_server.url, payload, sandbox_server.token)
    query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert query["signature"] == hmac_hex(query["payload"], sandbox_server.token)
    assert sign(query["payload"], sandbox_server.token) == query["signature"]
    assert query["signature"] == query["signature"].lower() and len(query["signature"]) == 128
    padded = query["payload"] + "=" * (-len(query["payload"]) % 4)
    assert json.loads(base64.urlsafe_b64decode(padded)) == {
        **payload_dict(sandbox_server.merchant_id, expiresAt=payload.expires_at),
        "amount": "1500.5",  # the client's canonical text of 1500.50
    }
    page = httpx.get(link)
    assert page.status_code == 200
    assert state_of_page(page.text)["screen"] == "form"
    assert sandbox_server.token not in page.text


@pytest.mark.parametrize("padded", [False, True])
def test_payload_is_accepted_with_and_without_padding(sandbox_server, padded: bool) -> None:
    # A JSON length that is not a multiple of 3 gives padding to strip or keep.
    payload = next(
        p
        for n in range(1, 4)
        if len(json.dumps(p := payload_dict(sandbox_server.merchant_id, userId="u" * n))) % 3
    )
    query = signed_query(payload, sandbox_server.token, padded=padded)
    assert query["payload"].endswith("=") is padded
    page = httpx.get(widget_url(sandbox_server.url, query))
    assert page.status_code == 200, page.text[-300:]
    assert state_of_page(page.text)["amount"] == "1500.50"


@pytest.mark.parametrize(
    ("overrides", "status", "code", "detail"),
    [
        ({"note": "hi"}, 400, "PAYLOAD_INVALID", "note: unknown field"),
        ({"userId": None}, 400, "PAYLOAD_INVALID", "userId: required"),
        ({"userId": "a\nb"}, 400, "PAYLOAD_INVALID", "userId: control characters are not allowed"),
        ({"externalId": "x" * 256}, 400, "PAYLOAD_INVALID", "externalId: at most 255 characters"),
        ({"amount": "0.99"}, 400, "PAYLOAD_INVALID", "amount: must be from 1 to 99999999.99"),
        (
            {"amount": "10.005"},
            400,
            "PAYLOAD_INVALID",
            "amount: not a decimal with at most 2 digits",
        ),
        ({"currency": "USD"}, 400, "PAYLOAD_INVALID", "currency: must be RUB"),
        ({"serviceId": 101}, 400, "PAYLOAD_INVALID", "serviceId: not a BANK_ACCOUNT RUB service"),
        (
            {"expiresAt": int(time.time()) + 25 * 3600},
            400,
            "PAYLOAD_INVALID",
            "expiresAt: at most 24 hours ahead",
        ),
        ({"expiresAt": int(time.time()) - 1}, 410, "LINK_EXPIRED", None),
        ({"merchantId": "11111111-2222-4333-8444-555555555555"}, 403, "SIGNATURE_INVALID", None),
    ],
)
def test_bad_links_get_their_error(sandbox_server, overrides, status, code, detail) -> None:
    query = signed_query(
        payload_dict(sandbox_server.merchant_id, **overrides), sandbox_server.token
    )
    page = httpx.get(widget_url(sandbox_server.url, query))
    assert page.status_code == status
    error = state_of_page(page.text)["error"]
    assert error == ({"code": code, "detail": detail} if detail else {"code": code})


def test_float_artifact_amount_number_is_refused(sandbox_server) -> None:
    raw = json.dumps(payload_dict(sandbox_server.merchant_id)).replace(
        '"1500.50"', "0.30000000000000004"
    )
    page = httpx.get(widget_url(sandbox_server.url, signed_query(raw, sandbox_server.token)))
    assert state_of_page(page.text)["error"]["detail"].startswith("amount:")


@pytest.mark.parametrize("how", ["tampered", "wrong key", "uppercase", "missing"])
def test_signatures_that_do_not_match_are_refused(sandbox_server, how: str) -> None:
    query = signed_query(payload_dict(sandbox_server.merchant_id), sandbox_server.token)
    if how == "tampered":
        query["payload"] = signed_query(payload_dict(sandbox_server.merchant_id, amount="2"), "x")[
            "payload"
        ]
    elif how == "wrong key":
        query = signed_query(payload_dict(sandbox_server.merchant_id), "another-token")
    elif how == "uppercase":
        query["signature"] = query["signature"].upper()
    else:
        query["signature"] = ""
    page = httpx.get(widget_url(sandbox_server.url, query))
    assert (page.status_code, state_of_page(page.text)["error"]["code"]) == (
        403,
        "SIGNATURE_INVALID",
    )


def test_details_are_checked_on_save_stored_per_user_and_one_link_pays_once(sandbox_server) -> None:
    http = httpx.Client(base_url=sandbox_server.url)
    query = signed_query(
        payload_dict(sandbox_server.merchant_id, externalId="e-1"), sandbox_server.token
    )
    bad = http.post(
        "/payout-widget/requisites",
        json={**query, "requisites": requisites(phone="+7900", bik="000000000")},
    )
    assert bad.status_code == 400
    assert set(bad.json()["fields"]) == {"phone", "bik"}
    assert http.post("/payout-widget/payout", json=query).status_code == 409  # nothing stored yet
    saved = http.post("/payout-widget/requisites", json={**query, "requisites": requisites("0042")})
    assert saved.json() == {
        "changed": False,
        "account": {"bankName": "Сбербанк", "last4": "0042", "fullName": "Иванов Иван Иванович"},
    }
    replaced = http.post(
        "/payout-widget/requisites", json={**query, "requisites": requisites("0077")}
    )
    assert replaced.json()["changed"] is True
    first = http.post("/payout-widget/payout", json=query).json()
    second = http.post("/payout-widget/payout", json=query).json()
    assert first["created"] is True and second["created"] is False
    assert first["payout"]["id"] == second["payout"]["id"]
    locked = http.post(
        "/payout-widget/requisites", json={**query, "requisites": requisites("0099")}
    )
    assert locked.status_code == 409  # the link has its payout: details no longer change
    payout = http.get(
        "/v1/payouts/external/e-1", headers={"X-Api-Token": sandbox_server.token}
    ).json()
    assert payout["account"]["requisites"].endswith("0077")
    assert (payout["type"], payout["currency"], payout["amount"]) == (
        "BANK_ACCOUNT",
        "RUB",
        "1500.50",
    )
    assert http.get("/_sandbox/stats").json()["payoutsByExternalId"] == {"e-1": 1}

    # The same client's next link shows the stored account; another client's shows the form.
    later = signed_query(
        payload_dict(sandbox_server.merchant_id, externalId="e-2"), sandbox_server.token
    )
    state = state_of_page(http.get(widget_url(sandbox_server.url, later)).text)
    assert state["screen"] == "confirm"
    assert state["account"] == {
        "bankName": "Сбербанк",
        "last4": "0077",
        "fullName": "Иванов Иван Иванович",
    }
    assert "40817810" not in json.dumps(state)  # only the last four digits reach the page
    other = signed_query(
        payload_dict(sandbox_server.merchant_id, externalId="e-3", userId="u-9"),
        sandbox_server.token,
    )
    assert state_of_page(http.get(widget_url(sandbox_server.url, other)).text)["screen"] == "form"
    reopened = state_of_page(http.get(widget_url(sandbox_server.url, query)).text)
    assert reopened["screen"] == "status" and reopened["payout"]["id"] == first["payout"]["id"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("fullName", "Ivan Ivanov"),
        ("fullName", "Иван"),
        ("phone", "89001234567"),
        ("bik", "044525999"),
        ("account", "40702810000000000000"),
        ("birthDate", "31.02.1990"),
        ("birthDate", "01.01.1890"),
    ],
)
def test_each_rule_of_the_details_is_enforced_by_the_server(
    sandbox_server, field: str, value: str
) -> None:
    query = signed_query(payload_dict(sandbox_server.merchant_id), sandbox_server.token)
    answer = httpx.post(
        f"{sandbox_server.url}/payout-widget/requisites",
        json={**query, "requisites": requisites(**{field: value})},
    )
    assert answer.status_code == 400
    assert list(answer.json()["fields"]) == [field]
