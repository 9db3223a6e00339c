"""The recipient's screens tell the truth in a race and through a passing fault: of two devices
opening one claim, only the first gets a widget link and the second is told the claim was used
(never whose account was paid); a 5xx or 429 from the service is retried before any page."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from links_support import Clock, pay_through_widget, read_claims, write_links_file
from pydantic import SecretStr
from support.stats import sandbox_stats

from payflow.api import PayoutsClient
from payflow.links.batch import issue_claims_file, register_links
from payflow.links.rows import read_link_rows
from payflow.links.server import CLAIM_RETRY, ClaimsServer
from payflow.links.store import LinkStore

# A passing fault at every fourth request or so, as the issue saw (10 % 5xx) and worse.
FAULTS = {"error_rate": 0.25, "rate_limit_rate": 0.05, "retry_after": 1, "seed": 41}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LinkStore]:
    opened = LinkStore.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}", clock=Clock())
    yield opened
    opened.close()


@pytest.fixture
def faulty(make_sandbox):  # type: ignore[no-untyped-def]
    return make_sandbox(**FAULTS)


@pytest.fixture
def claims(store: LinkStore, faulty) -> Iterator[ClaimsServer]:  # type: ignore[no-untyped-def]
    with (
        PayoutsClient(faulty.token, base_url=faulty.url, retry=CLAIM_RETRY) as client,
        ClaimsServer(store, client, SecretStr(faulty.token), faulty.url) as server,
    ):
        yield server


def _claim_urls(store: LinkStore, tmp_path: Path, base: str, count: int) -> dict[str, str]:
    rows = [(f"race-{n}", f"u{n}", "1500", "") for n in range(count)]
    report = read_link_rows(write_links_file(tmp_path / "links.csv", rows))
    registered = register_links(store, report)
    issued = issue_claims_file(
        store, report.batch_id, registered.new, out_dir=tmp_path / "out", base_url=base, days=7
    )
    assert issued.path is not None
    return read_claims(Path(issued.path))


def _open_at_once(url: str, devices: list[httpx.Client]) -> list[httpx.Response]:
    """Each device opens `url` at the same moment (a real race, two threads)."""
    start = threading.Barrier(len(devices))
    answers: list[httpx.Response | None] = [None] * len(devices)

    def open_on(index: int) -> None:
        start.wait()
        answers[index] = devices[index].get(url)

    threads = [threading.Thread(target=open_on, args=(i,)) for i in range(len(devices))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(answer is not None for answer in answers)
    return [answer for answer in answers if answer is not None]


def test_the_second_device_in_a_claim_race_is_told_the_claim_was_used(
    store: LinkStore, claims: ClaimsServer, faulty, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # Found by use: two devices opened one claim; the payout went to the first device's
    # account and the second was shown "Деньги отправлены на ваш счёт".
    urls = _claim_urls(store, tmp_path, claims.url, 4)
    for external_id, url in urls.items():
        with httpx.Client() as first, httpx.Client() as second:
            answers = _open_at_once(url, [first, second])
            codes = sorted(answer.status_code for answer in answers)
            assert codes == [303, 409], [a.text for a in answers]
            winner, loser = (first, second) if answers[0].status_code == 303 else (second, first)
            link = next(a for a in answers if a.status_code == 303).headers["location"]
            used = next(a for a in answers if a.status_code == 409)
            assert "Ссылка уже использована" in used.text and "payout-widget" not in used.text
            created = pay_through_widget(link, last4="1234")
            assert created["created"] is True
            # Once paid, the second device still learns nothing of the payout or its account.
            again = loser.get(url)
            assert again.status_code == 409 and "Ссылка уже использована" in again.text
            for text in (used.text, again.text):
                assert "ваш счёт" not in text and "1234" not in text and "Выплата" not in text
            # The first device reopening its claim sees its payout, not a second form.
            mine = winner.get(url)
            assert mine.status_code == 200 and "Выплата" in mine.text, mine.text
            # Said of "the account given for this payout": a claim opened before devices were
            # recorded may reach another device, which was told "your account".
            assert "указанный для этой выплаты" in mine.text and "ваш счёт" not in mine.text
        assert sandbox_stats(faulty.url)["payoutsByExternalId"][external_id] == 1


def test_a_passing_fault_is_retried_before_the_recipient_sees_a_page(
    store: LinkStore, claims: ClaimsServer, faulty, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # Found by use: with 10 % of calls answering 5xx, 3 of 400 claim opens showed "Сервис
    # временно недоступен" and the recipient had to open the link again.
    urls = _claim_urls(store, tmp_path, claims.url, 40)
    # Four failures in a row at the first open: beyond the client's usual three retries.
    httpx.post(f"{faulty.url}/_sandbox/faults", json={"fail_first": 4}).raise_for_status()
    # The claims server waits out four retries before it answers: the client waits longer.
    opened = [httpx.get(url, timeout=60) for url in urls.values()]
    unavailable = [a for a in opened if "временно недоступен" in a.text]
    assert not unavailable, f"{len(unavailable)} of {len(opened)} opens showed the fault page"
    assert {a.status_code for a in opened} == {303}


@pytest.mark.postgres
def test_of_many_devices_racing_on_postgresql_exactly_one_holds_the_claim() -> None:
    # Several claims servers may share one PostgreSQL ledger: the binding is one conditional
    # UPDATE, so of devices opening a claim at the same moment exactly one holds it.
    from decimal import Decimal

    from support.postgres import fresh_postgres_database

    from payflow.links.records import LinkRow

    with fresh_postgres_database() as url:
        stores = [LinkStore.open(url) for _ in range(2)]
        try:
            rows = [LinkRow(2, "pg-1", "u1", Decimal("10"))]
            stores[0].register("pg", "pg.csv", rows)
            (issued,) = stores[0].issue_claims(stores[0].rows("pg"), days=1)
            claim = stores[0].find_claim(issued.token)
            assert claim is not None
            start = threading.Barrier(8)
            held: list[bool] = []

            def open_on(n: int) -> None:
                start.wait()
                held.append(stores[n % 2].hold_claim(claim, f"device-{n}"))

            threads = [threading.Thread(target=open_on, args=(n,)) for n in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert sorted(held) == [False] * 7 + [True]
        finally:
            for store in stores:
                store.close()
