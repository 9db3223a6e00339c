"""The widget in a real Chromium: a merchant's page on another origin embeds a claim URL, the
recipient fills the form, the host receives every message in order from the widget's origin
only, the payout reaches COMPLETED through the sandbox's webhook, and reopening shows its state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import CHROMIUM_ARGS, require_browser, save_screenshot, serve_host_page
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright
from pydantic import SecretStr
from support.stats import sandbox_stats
from widget_support import payload_dict, requisites, signed_query, widget_url

from payflow.api import PayoutsClient
from payflow.ledger.states import RowState
from payflow.links.files import claim_url
from payflow.links.records import LinkRow
from payflow.links.server import ClaimsServer
from payflow.links.store import LinkStore
from payflow.webhooks import WebhookReceiver


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = require_browser()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def host_url() -> Iterator[str]:
    yield from serve_host_page()


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def messages(page: Any) -> list[dict[str, Any]]:
    return page.evaluate("window.messages")


def types(page: Any) -> list[str]:
    return [m["type"] for m in messages(page)]


def open_host(browser: Any, host_url: str, widget_origin: str, width: int = 390) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{host_url}/?origin={widget_origin}")
    return page


@pytest.fixture
def links_setup(make_sandbox, tmp_path: Path) -> Iterator[dict[str, Any]]:
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    token = "sandbox-secret-token"
    with WebhookReceiver(ledger_url, token) as receiver:
        sandbox = make_sandbox(merchant_callback_url=receiver.url, final_delay=1.0)
        store = LinkStore.open(ledger_url)
        store.register(
            "b1", "links.csv", [LinkRow(2, "link-browser-1", "user-7", Decimal("1500.50"))]
        )
        (claim,) = store.issue_claims([store.rows("b1")[0]], days=3)
        with (
            PayoutsClient(token, base_url=sandbox.url) as client,
            ClaimsServer(store, client, SecretStr(token), sandbox.url) as claims,
        ):
            yield {
                "sandbox": sandbox,
                "store": store,
                "claim_url": claim_url(claims.url, claim.token),
                "claims_url": claims.url,
            }
        store.close()


def test_claim_in_an_iframe_fills_the_form_pays_once_and_reports_every_message(
    browser: Any, host_url: str, links_setup: dict[str, Any], tmp_path: Path
) -> None:
    sandbox, store = links_setup["sandbox"], links_setup["store"]
    page = open_host(browser, host_url, sandbox.url)
    page.evaluate("src => window.embed(src, 390)", links_setup["claim_url"])
    wait_for(lambda: "ready" in types(page), "ready")
    frame = page.frame_locator("#w")
    first = messages(page)[0]
    assert first == {
        "type": "ready",
        "data": {"hasRequisites": False, "payout": None},
        "origin": sandbox.url,
    }

    # Invalid values: each field says what is wrong, nothing is saved.
    frame.locator("#fullName").fill("John Smith")
    frame.locator("#phone").fill("89001234567")
    frame.locator("#bik").fill("123456789")
    frame.locator("#account").fill("408178100012")
    frame.locator("#birthDate").fill("01.01.2020")
    frame.locator("#save").click()
    errors = {
        name: frame.locator(f"#{name}-error").inner_text()
        for name in ("fullName", "phone", "bik", "account", "birthDate")
    }
    assert errors == {
        "fullName": "Укажите фамилию и имя кириллицей",
        "phone": "Телефон в формате +7XXXXXXXXXX",
        "bik": "Выберите банк из списка (БИК из 9 цифр)",
        "account": "Номер счёта — 20 цифр",
        "birthDate": "Возраст получателя — от 14 до 120 лет",
    }
    wait_for(lambda: "resize" in types(page), "resize")
    save_screenshot(page, tmp_path, "widget-form-errors-390.png")
    assert "requisites_saved" not in types(page)

    # A valid BIK with a wrong check key is caught while typing.
    frame.locator("#bik").fill(requisites()["bik"])
    frame.locator("#account").fill(requisites()["account"][:-1] + "9")
    assert frame.locator("#account-error").inner_text() == "Номер счёта не соответствует БИК банка"
    assert frame.locator("#bik-bank").inner_text() == "Сбербанк"

    good = requisites("0042")
    for name, value in good.items():
        frame.locator(f"#{name}").fill(value)
    assert all(frame.locator(f"#{n}-error").inner_text() == "" for n in good)
    save_screenshot(page, tmp_path, "widget-form-390.png")
    frame.locator("#save").click()
    wait_for(lambda: "payout_created" in types(page), "payout_created")
    created = next(m for m in messages(page) if m["type"] == "payout_created")
    saved = next(m for m in messages(page) if m["type"] == "requisites_saved")
    assert saved["data"] == {"externalId": "link-browser-1", "changed": False}
    assert created["data"]["externalId"] == "link-browser-1"
    assert created["data"]["status"] == "CREATED"

    # The ledger hears COMPLETED from the sandbox's webhook; the widget shows it.
    row = wait_for(
        lambda: next((v for v in store.rows("b1") if v.state is RowState.COMPLETED), None),
        "COMPLETED through the webhook",
    )
    assert row.payout_id == created["data"]["payoutId"]
    frame.locator("text=Выплата выполнена").wait_for(timeout=30_000)
    save_screenshot(page, tmp_path, "widget-final-390.png")
    frame.locator("#close").click()
    wait_for(lambda: "close" in types(page), "close")

    order = [t for t in types(page) if t != "resize"]
    assert order == ["ready", "requisites_saved", "payout_created", "close"]
    assert types(page).index("resize") < types(page).index("requisites_saved")
    assert {m["origin"] for m in messages(page)} == {sandbox.url}
    # The host's check holds: a look-alike message from another origin is refused.
    page.evaluate("window.postMessage({source: 'payout-widget', type: 'close', data: {}}, '*')")
    wait_for(lambda: page.evaluate("window.rejected.length") >= 1, "the forged message refused")
    assert types(page).count("close") == 1

    # Reopening the signed link shows the state; reopening the claim shows it too. One payout.
    signed_link = next(f.url for f in page.frames if "/payout-widget?" in f.url)
    page.evaluate("src => window.embed(src, 390)", signed_link)
    wait_for(lambda: types(page).count("ready") == 2, "second ready")
    again = [m for m in messages(page) if m["type"] == "ready"][-1]
    assert again["data"] == {
        "hasRequisites": True,
        "payout": {"id": row.payout_id, "status": "COMPLETED"},
    }
    frame.locator("text=Выплата выполнена").wait_for()
    assert frame.locator("#screen-form").is_hidden()
    page.evaluate("src => window.embed(src, 390)", links_setup["claim_url"])
    frame.locator("text=Выплата выполнена").wait_for()
    stats = sandbox_stats(sandbox.url)
    assert stats["payoutsByExternalId"] == {"link-browser-1": 1}
    payout = stats["payouts"][0]
    assert (payout["type"], payout["currency"], payout["status"]) == (
        "BANK_ACCOUNT",
        "RUB",
        "COMPLETED",
    )
    page.close()


@pytest.mark.parametrize(
    ("case", "code", "title"),
    [
        ("expired", "LINK_EXPIRED", "Срок действия ссылки истёк"),
        ("tampered", "SIGNATURE_INVALID", "Ссылка недействительна"),
        ("foreign", "SIGNATURE_INVALID", "Ссылка недействительна"),
        ("unknown-field", "PAYLOAD_INVALID", "Ссылка повреждена"),
    ],
)
def test_unusable_links_show_and_send_their_error(
    browser: Any, host_url: str, sandbox_server, tmp_path: Path, case: str, code: str, title: str
) -> None:
    merchant, key = sandbox_server.merchant_id, sandbox_server.token
    if case == "expired":
        query = signed_query(payload_dict(merchant, expiresAt=int(time.time()) - 60), key)
    elif case == "tampered":
        query = signed_query(payload_dict(merchant), key)
        forged = signed_query(payload_dict(merchant, amount="99999.00"), key)
        query["payload"] = forged["payload"]
    elif case == "foreign":
        other = "11111111-2222-4333-8444-555555555555"
        query = signed_query(payload_dict(other), key)
    else:
        query = signed_query(payload_dict(merchant, note="x"), key)
    page = open_host(browser, host_url, sandbox_server.url, width=320)
    page.evaluate("src => window.embed(src, 320)", widget_url(sandbox_server.url, query))
    wait_for(lambda: "error" in types(page), "error message")
    error = next(m for m in messages(page) if m["type"] == "error")
    assert error["data"]["code"] == code
    assert error["origin"] == sandbox_server.url
    if case == "unknown-field":
        assert error["data"]["detail"] == "note: unknown field"
    frame = page.frame_locator("#w")
    assert frame.locator("#error-title").inner_text() == title
    assert "ready" not in types(page)
    save_screenshot(page, tmp_path, f"widget-error-{case}-320.png")
    page.close()


def test_a_payout_that_cannot_be_created_sends_payout_failed_and_no_reason(
    browser: Any, host_url: str, make_sandbox, tmp_path: Path
) -> None:
    sandbox = make_sandbox(balances={"RUB": Decimal("10")})
    query = signed_query(payload_dict(sandbox.merchant_id, externalId="poor-1"), sandbox.token)
    page = open_host(browser, host_url, sandbox.url)
    page.evaluate("src => window.embed(src, 390)", widget_url(sandbox.url, query))
    wait_for(lambda: "ready" in types(page), "ready")
    frame = page.frame_locator("#w")
    for name, value in requisites().items():
        frame.locator(f"#{name}").fill(value)
    frame.locator("#save").click()
    wait_for(lambda: "payout_failed" in types(page), "payout_failed")
    failed = next(m for m in messages(page) if m["type"] == "payout_failed")
    assert failed["data"] == {"externalId": "poor-1", "payoutId": None}
    assert "balance" not in frame.locator("#widget").inner_text().lower()
    assert frame.locator("#confirm").is_visible()  # the client may try again
    page.close()


def test_as_a_popup_close_closes_it_and_the_opener_hears_close(
    browser: Any, host_url: str, sandbox_server
) -> None:
    query = signed_query(
        payload_dict(sandbox_server.merchant_id, externalId="pop-1"), sandbox_server.token
    )
    with httpx.Client(base_url=sandbox_server.url) as http:
        assert (
            http.post(
                "/payout-widget/requisites", json={**query, "requisites": requisites()}
            ).status_code
            == 200
        )
        assert http.post("/payout-widget/payout", json=query).json()["created"] is True
    page = open_host(browser, host_url, sandbox_server.url)
    with page.expect_popup() as popup_info:
        page.evaluate("src => window.popup(src)", widget_url(sandbox_server.url, query))
    popup = popup_info.value
    popup.locator("#close").wait_for()
    wait_for(lambda: "ready" in types(page), "ready from the pop-up")
    try:
        popup.locator("#close").click()
    except PlaywrightError:
        # The button closes its own window; when that wins the race with the click's
        # acknowledgement, Playwright reports the target closed. Anything else is a failure.
        if not popup.is_closed():
            raise
    wait_for(lambda: "close" in types(page), "close from the pop-up")
    wait_for(lambda: popup.is_closed(), "the pop-up closed itself")
