"""Links in bulk: rows checked by the widget's rules, claims hashed in the ledger and written to
an owner-only file, claims answered by minting signed links, and the batch reconciled."""

from __future__ import annotations

import asyncio
import base64
import codecs
import json
import stat
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from links_support import Clock, pay_through_widget, query_of, read_claims, write_links_file
from openpyxl import load_workbook
from pydantic import SecretStr
from sqlalchemy import create_engine, text
from support.stats import sandbox_stats
from widget_support import hmac_hex, payload_dict, signed_query, widget_url

from payflow.api import AsyncPayoutsClient, PayoutsClient
from payflow.approvals import record_decision
from payflow.intake.lookups import ServiceInfo, fetch_services
from payflow.ledger import Ledger
from payflow.links.batch import expired_unused, issue_claims_file, register_links, report_links
from payflow.links.rows import check_link_services, read_link_rows
from payflow.links.server import ClaimsServer
from payflow.links.store import LinkStore, token_hash
from payflow.links.tracking import refresh_links
from payflow.model import PayoutInstruction


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Iterator[LinkStore]:
    opened = LinkStore.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}", clock=clock)
    yield opened
    opened.close()


@pytest.fixture
def claims(store: LinkStore, sandbox_server) -> Iterator[ClaimsServer]:
    with (
        PayoutsClient(sandbox_server.token, base_url=sandbox_server.url) as client,
        ClaimsServer(store, client, SecretStr(sandbox_server.token), sandbox_server.url) as server,
    ):
        yield server


def issue(
    store: LinkStore, tmp_path: Path, rows: list[tuple[str, str, str, str]], base: str
) -> tuple[str, Path]:
    report = read_link_rows(write_links_file(tmp_path / "links.csv", rows))
    registered = register_links(store, report)
    issued = issue_claims_file(
        store, report.batch_id, registered.new, out_dir=tmp_path / "out", base_url=base, days=7
    )
    assert issued.path is not None
    return report.batch_id, Path(issued.path)


def test_every_problem_of_every_row_is_reported_at_once(tmp_path: Path) -> None:
    path = write_links_file(
        tmp_path / "bad.csv",
        [
            ("ok-1", "u1", "1500.50", ""),
            ("bad-amount", "u2", "0.30000000000000004", ""),
            ("bad-decimals", "u3", "10.005", ""),
            ("too-big", "u4", "100000000", ""),
            ("x" * 256, "u5", "10", ""),
            ("ctl", "a\tb", "10", "abc"),
            ("twice", "u6", "10", ""),
            ("twice", "u7", "11", ""),
            ("", "", "", ""),
            ("negative", "u8", "-500", ""),
            ("spaced ", "u9", "10", ""),  # the space would be sent as part of the id
            ("spaced-user", " u10", "10", ""),
        ],
    )
    report = read_link_rows(path)
    assert [row.external_id for row in report.valid] == ["ok-1"]
    found = {(p.row, p.column) for p in report.problems}
    assert found == {
        (3, "amount"),
        (4, "amount"),
        (5, "amount"),
        (6, "externalId"),
        (7, "userId"),
        (7, "serviceId"),
        (8, "externalId"),
        (9, "externalId"),
        (11, "amount"),
        (12, "externalId"),
        (13, "userId"),
    }
    assert report.rejected == 10  # the blank row is dropped, never a reject
    # Each problem names its own cause: a negative amount is not a formatting slip.
    [negative] = [p for p in report.problems if p.row == 11]
    assert negative.message == "amount must be positive (a link pays the recipient)"


def test_a_semicolon_file_from_russian_excel_reads_its_amounts_as_a_payout_file_does(
    tmp_path: Path,
) -> None:
    # `1 250,50` was rejected ("amount must be written like 1500 or 1500.50").
    path = tmp_path / "russian.csv"
    path.write_text("externalId;userId;amount\nru-1;u1;1 250,50\nru-2;u2;1.250,50\n", "utf-8")
    report = read_link_rows(path)
    assert [(row.external_id, row.amount) for row in report.valid] == [("ru-1", Decimal("1250.50"))]
    assert [(p.row, p.column) for p in report.problems] == [(3, "amount")]


def test_a_windows_1251_file_says_how_it_was_read_as_a_payout_file_does(tmp_path: Path) -> None:
    # Read as Windows-1251 with no word, while a payout file of the same Excel is told: a
    # userId in another alphabet may read wrong, and the recipient is matched by it.
    path = tmp_path / "cp1251.csv"
    path.write_bytes("externalId;userId;amount\ncp-1;Анна;1 250,50\n".encode("cp1251"))
    report = read_link_rows(path)
    assert [(row.user_id, row.amount) for row in report.valid] == [("Анна", Decimal("1250.50"))]
    assert [n.rule for n in report.notices] == ["read_as_windows_1251", "amount_decimal_comma"]


async def sandbox_services(server: Any) -> list[ServiceInfo]:
    """The sandbox's payout services list, as the links flow reads it."""
    async with AsyncPayoutsClient(server.token, base_url=server.url) as client:
        return await fetch_services(client)


async def test_a_service_id_the_widget_refuses_is_rejected_before_any_claim(
    tmp_path: Path, sandbox_server
) -> None:
    # Row 3's serviceId 101 (SBP) and row 4's 999 got claims; the recipient opening one met the
    # widget's error page (PAYLOAD_INVALID serviceId), and the operator read "OPEN".
    path = write_links_file(
        tmp_path / "services.csv",
        [
            ("s-102", "u1", "10", "102"),
            ("s-101", "u2", "10", "101"),
            ("s-999", "u3", "10", "999"),
            ("s-none", "u4", "10", ""),
        ],
    )
    report = read_link_rows(path)
    assert len(report.valid) == 4  # the file's own rules cannot know the services
    check_link_services(report, await sandbox_services(sandbox_server))
    assert [row.external_id for row in report.valid] == ["s-102", "s-none"]
    assert [(p.row, p.column, p.rule, p.value) for p in report.problems] == [
        (3, "serviceId", "service_mismatch", "101"),
        (4, "serviceId", "service_unknown", "999"),
    ]
    assert report.problems[0].message == (
        "serviceId 101 is a SBP service in RUB, not BANK_ACCOUNT in RUB: "
        "the widget would refuse the link"
    )
    assert report.rejected == 2
    # The widget refuses such a link indeed: the check is the widget's rule, not a guess.
    payload = payload_dict(sandbox_server.merchant_id, serviceId=101)
    page = httpx.get(widget_url(sandbox_server.url, signed_query(payload, sandbox_server.token)))
    assert page.status_code == 400 and "serviceId" in page.text


async def test_a_row_rejected_for_its_cells_still_learns_its_service_is_refused(
    tmp_path: Path, sandbox_server
) -> None:
    # Only rows that broke no rule were looked up: a row rejected for its amount learned that
    # its serviceId was refused only once the amount was fixed, in a second run.
    path = write_links_file(
        tmp_path / "services.csv",
        [
            ("s-amount", "u1", "-5", "999"),
            ("s-user", " u2", "10", "101"),
            ("s-letters", "u3", "abc", "x1"),  # no whole number: nothing to look up
            ("s-ok", "u4", "10", "102"),
        ],
    )
    report = read_link_rows(path)
    check_link_services(report, await sandbox_services(sandbox_server))
    assert [(p.row, p.column, p.rule) for p in report.problems] == [
        (2, "amount", "amount_positive"),
        (2, "serviceId", "service_unknown"),
        (3, "userId", "user_id_spaces"),
        (3, "serviceId", "service_mismatch"),
        (4, "amount", "amount_plain_decimal"),
        (4, "serviceId", "service_id_integer"),
    ]
    assert [row.external_id for row in report.valid] == ["s-ok"]
    assert report.rejected == 3


def test_a_padded_id_is_still_judged_by_the_widget_rules(tmp_path: Path) -> None:
    # A space at either end replaced the whole cell by a stand-in: its length and control
    # characters were told only after the space was removed.
    path = write_links_file(
        tmp_path / "padded.csv",
        [(" " + "x" * 256, "u1", "10", ""), ("pad-user", " a\tb", "10", "")],
    )
    report = read_link_rows(path)
    assert [(p.row, p.column, p.rule) for p in report.problems] == [
        (2, "externalId", "external_id_spaces"),
        (2, "externalId", "widget_externalId"),
        (3, "userId", "user_id_spaces"),
        (3, "userId", "widget_userId"),
    ]


def test_a_service_id_of_other_digits_is_no_whole_number(tmp_path: Path) -> None:
    # str.isdigit took '²' and '٣': the first ended `payflow links` in "unexpected error
    # (ValueError)", the second was sent as serviceId 3. A payout file rejects both.
    path = write_links_file(
        tmp_path / "digits.csv",
        [("sup", "u1", "10", "²"), ("arabic", "u2", "10", "٣"), ("long", "u3", "10", "9" * 19)],
    )
    report = read_link_rows(path)
    assert [(p.row, p.column, p.rule) for p in report.problems] == [
        (row, "serviceId", "service_id_integer") for row in (2, 3, 4)
    ]
    assert report.valid == [] and report.service_ids == {}


def test_claims_file_is_owner_only_and_the_ledger_keeps_only_hashes(
    store: LinkStore, tmp_path: Path
) -> None:
    _, path = issue(
        store,
        tmp_path,
        [("a-1", "u1", "10", ""), ("a-2", "Анна-2", "20.5", "102")],
        "https://pay.example/",
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # With a BOM, as every CSV payflow writes: Excel showed a Cyrillic userId as mojibake.
    assert path.read_bytes().startswith(codecs.BOM_UTF8)
    assert ",Анна-2,20.50," in path.read_text(encoding="utf-8-sig")
    urls = read_claims(path)
    assert set(urls) == {"a-1", "a-2"}
    tokens = [url.removeprefix("https://pay.example/claim/") for url in urls.values()]
    assert all(len(token) >= 43 for token in tokens)  # 256 random bits
    engine = create_engine(f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    with engine.connect() as connection:
        stored = set(connection.execute(text("SELECT token_hash FROM link_claims")).scalars())
    engine.dispose()
    assert stored == {token_hash(token) for token in tokens}
    dump = (tmp_path / "ledger.sqlite3").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("ledger.sqlite3-*")
    )
    assert not any(token.encode() in dump for token in tokens)
    # A second run of the same file registers nothing new and never rewrites the claims file.
    again = register_links(store, read_link_rows(tmp_path / "links.csv"))
    assert (len(again.new), again.already_known) == (0, 2)


def test_a_row_seen_before_names_where_its_link_is_and_a_changed_row_what_changed(
    store: LinkStore, tmp_path: Path
) -> None:
    first, _ = issue(
        store, tmp_path, [("g-1", "anna", "2500", ""), ("g-2", "boris", "1500.5", "")], "https://p/"
    )
    again = read_link_rows(
        write_links_file(
            tmp_path / "again.csv", [("g-2", "boris", "9999", ""), ("g-1", "anna", "2500", "")]
        )
    )
    registered = register_links(store, again)
    assert registered.new == [] and registered.already_known == 1
    assert registered.known == [
        f"row 3: externalId 'g-1' has a link from links batch {first} (row 2): its claim is in"
        " that batch's claims file; none issued again"
    ]
    [conflict] = registered.conflicts
    assert (conflict.row, conflict.message) == (
        2,
        f"externalId 'g-2' was registered by links batch {first} (row 3) with different amount"
        " (9999.00 RUB here, 1500.50 RUB before); no link issued",
    )


def test_a_row_seen_before_whose_payout_is_paid_says_it_is_paid(
    store: LinkStore, tmp_path: Path
) -> None:
    # Found by use: a row of an earlier file whose recipient was already paid read "its claim
    # is in that batch's claims file", and the operator went to send that claim again.
    first, _ = issue(
        store, tmp_path, [("p-1", "anna", "2500", ""), ("p-2", "boris", "10", "")], "https://p/"
    )
    assert store.record_status("p-1", "pay-1", "PROCESSING", None)
    assert store.record_status("p-1", "pay-1", "COMPLETED", None)
    again = read_link_rows(
        write_links_file(
            tmp_path / "again.csv", [("p-1", "anna", "2500", ""), ("p-2", "boris", "10", "")]
        )
    )
    assert register_links(store, again).known == [
        f"row 2: externalId 'p-1' has a link from links batch {first} (row 2): already paid (its"
        " payout is COMPLETED); none issued again",
        f"row 3: externalId 'p-2' has a link from links batch {first} (row 3): its claim is in"
        " that batch's claims file; none issued again",
    ]


def test_a_claim_opened_twice_mints_two_links_and_produces_one_payout(
    store: LinkStore, claims: ClaimsServer, sandbox_server, tmp_path: Path
) -> None:
    batch_id, path = issue(store, tmp_path, [("c-1", "u1", "1500.50", "")], claims.url)
    url = read_claims(path)["c-1"]
    with httpx.Client() as http:
        first = http.get(url)
        second = http.get(url)
    assert first.status_code == second.status_code == 303
    links = [first.headers["location"], second.headers["location"]]
    assert links[0] != links[1]
    assert first.headers["cache-control"] == "no-store"
    for link in links:
        assert link.startswith(f"{sandbox_server.url}/payout-widget?payload=")
        query = query_of(link)
        assert query["signature"] == hmac_hex(query["payload"], sandbox_server.token)
        payload = json.loads(
            base64.urlsafe_b64decode(query["payload"] + "=" * (-len(query["payload"]) % 4))
        )
        assert set(payload) == {
            "merchantId",
            "userId",
            "amount",
            "currency",
            "externalId",
            "expiresAt",
        }
        assert payload["merchantId"] == sandbox_server.merchant_id
        assert (payload["userId"], payload["amount"], payload["externalId"]) == (
            "u1",
            "1500.5",
            "c-1",
        )
        assert 29 * 60 <= payload["expiresAt"] - store.now().timestamp() <= 30 * 60
    created = [pay_through_widget(link) for link in links]
    assert created[0]["created"] is True and created[1]["created"] is False
    assert created[0]["payout"]["id"] == created[1]["payout"]["id"]
    stats = sandbox_stats(sandbox_server.url)
    assert stats["payoutsByExternalId"] == {"c-1": 1}
    (view,) = store.rows(batch_id)
    assert view.links_minted == 2
    # Opened again once the payout exists: its state, not a third link, on the device that
    # opened it; another device is told the claim was used, and nothing of the payout.
    with httpx.Client() as same_device:
        same_device.cookies = http.cookies
        third = same_device.get(url)
    assert third.status_code == 200
    assert "Выплата" in third.text and "payout-widget" not in third.text
    other = httpx.get(url)
    assert other.status_code == 409 and "Ссылка уже использована" in other.text
    assert "Выплата" not in other.text


def test_unknown_and_expired_claims_get_a_clear_page(
    store: LinkStore, claims: ClaimsServer, clock: Clock, tmp_path: Path
) -> None:
    _, path = issue(store, tmp_path, [("x-1", "u1", "10", "")], claims.url)
    url = read_claims(path)["x-1"]
    unknown = httpx.get(f"{claims.url}/claim/not-a-token")
    assert unknown.status_code == 404 and "Ссылка не найдена" in unknown.text
    clock.advance(days=8)
    expired = httpx.get(url)
    assert expired.status_code == 410 and "Срок действия ссылки истёк" in expired.text


def test_ten_thousand_links_reconciled_with_claims_used_and_expired(
    store: LinkStore, claims: ClaimsServer, sandbox_server, clock: Clock, tmp_path: Path
) -> None:
    rows = [
        (f"bulk-{n:05d}", f"user-{n}", f"{100 + n % 900}.{n % 100:02d}", "") for n in range(10_000)
    ]
    batch_id, path = issue(store, tmp_path, rows, claims.url)
    urls = read_claims(path)
    assert len(urls) == 10_000
    # About 5.5 million RUB: the ledger's policy asks two checkers before a claim pays.
    ledger = Ledger(store.engine, clock=store.now)
    for checker in ("carl", "dora"):
        record_decision(ledger, batch_id, approver=checker, decision="approve")
    used = {
        f"bulk-{n:05d}": ("1111" if i % 4 == 3 else "0042")
        for i, n in enumerate(range(0, 10_000, 250))
    }
    for external_id, last4 in used.items():
        link = httpx.get(urls[external_id]).headers["location"]
        assert pay_through_widget(link, last4)["created"] is True
    opened_only = "bulk-00001"
    assert httpx.get(urls[opened_only]).status_code == 303  # opened, never paid

    def all_final() -> bool:
        payouts = sandbox_stats(sandbox_server.url)["payouts"]
        return len(payouts) == len(used) and all(
            p["status"] in ("COMPLETED", "FAILED") for p in payouts
        )

    deadline = time.monotonic() + 60
    while not all_final():
        assert time.monotonic() < deadline, "sandbox payouts did not finish"
        time.sleep(0.2)

    async def refresh() -> Any:
        async with AsyncPayoutsClient(sandbox_server.token, base_url=sandbox_server.url) as client:
            return await refresh_links(client, store, batch_id)

    result = asyncio.run(refresh())
    assert (result.looked_up, result.moved, result.not_found) == (len(used) + 1, len(used), 1)
    clock.advance(days=8)
    paths, figures = report_links(store, batch_id, tmp_path / "out", sandbox=True)
    assert figures.claims == {"USED": len(used), "EXPIRED_UNUSED": 10_000 - len(used)}
    failed = [e for e, last4 in used.items() if last4 == "1111"]
    # A used claim is not a paid recipient: the figures count payouts and name each failed one.
    assert figures.statuses == {
        "COMPLETED": len(used) - len(failed),
        "FAILED": len(failed),
        "VALIDATED": 10_000 - len(used),
    }
    assert {line.split("'")[1] for line in figures.unpaid} == set(failed)
    assert all(line.endswith(": FAILED: Recipient account is blocked") for line in figures.unpaid)
    assert not figures.all_paid
    sheet = load_workbook(paths.xlsx, read_only=True)["Links"]
    table = {r[1]: r for r in sheet.iter_rows(min_row=2, values_only=True)}
    assert len(table) == 10_000
    assert failed and all(table[e][11] == "FAILED" for e in failed)
    assert all(table[e][5] == "USED" and table[e][10] for e in used)
    assert table[opened_only][5] == "EXPIRED_UNUSED" and table[opened_only][8] == 1
    assert {table[e][11] for e in used} == {"COMPLETED", "FAILED"}

    # Reissue: fresh claims, same externalIds, only for the expired unused rows.
    expired = expired_unused(store, batch_id)
    assert len(expired) == 10_000 - len(used)
    again = issue_claims_file(
        store, batch_id, expired, out_dir=tmp_path / "out", base_url=claims.url, days=7
    )
    assert again.path and stat.S_IMODE(Path(again.path).stat().st_mode) == 0o600
    fresh = read_claims(Path(again.path))
    assert set(fresh) == {v.external_id for v in expired}
    assert not set(fresh.values()) & set(urls.values())
    _, figures = report_links(store, batch_id, tmp_path / "out", sandbox=True)
    assert figures.claims == {"USED": len(used), "OPEN": 10_000 - len(used)}
    clock.now = datetime.now(UTC)  # back to real time: the widget checks expiresAt against it
    link = httpx.get(fresh[opened_only]).headers["location"]
    assert pay_through_widget(link)["created"] is True
    assert sandbox_stats(sandbox_server.url)["payoutsByExternalId"][opened_only] == 1


def test_a_links_row_cannot_reuse_an_ordinary_payouts_external_id(
    store: LinkStore, tmp_path: Path
) -> None:
    # An ordinary payout row, as `payflow run` registers it, holds the externalId first.
    report = read_link_rows(write_links_file(tmp_path / "l.csv", [("shared-1", "u1", "10", "")]))
    with store._engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO batches (batch_id, source_name, total_rows, valid_rows,"
                " rejected_rows, created_at)"
                " VALUES ('p1', 'p.csv', 1, 1, 0, '2026-01-01 00:00:00')"
            )
        )
        connection.execute(
            text(
                "INSERT INTO payouts (external_id, batch_id, row_number, content_hash, amount,"
                " currency, payment_type, requisites, name, user_id, state, attempts,"
                " corrected, created_at, updated_at)"
                " VALUES ('shared-1', 'p1', 2, 'h', '10', 'RUB', 'SBP', '79000000000', 'N',"
                " 'u', 'VALIDATED', 0, 0, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
            )
        )
    registered = register_links(store, report)
    assert registered.new == [] and registered.conflicts[0].rule == "external_id_conflict"
    assert store.rows(report.batch_id) == []


def test_a_payout_row_cannot_reuse_a_links_external_id(store: LinkStore, tmp_path: Path) -> None:
    # Found by hand: a payout batch paid "lk-x03" to someone else, and the link's recipient then
    # saw "payout done" on the claim page and USED in the links report.
    report = read_link_rows(write_links_file(tmp_path / "l.csv", [("lk-x03", "u3", "300", "")]))
    register_links(store, report)
    ledger = Ledger.open(str(store._engine.url))
    try:
        row = PayoutInstruction(
            row_number=2,
            external_id="lk-x03",
            amount=Decimal("300"),
            currency="RUB",
            payment_type="SBP",
            requisites="79161230001",
            name="Someone Else",
            user_id="other-user",
            bank_name="100000000111",
        )
        outcome = ledger.register_batch("p1", "p.csv", [row], [])
        [conflict] = outcome.conflicts
        assert conflict.reason == (
            f"externalId 'lk-x03' belongs to a payout link of links batch {report.batch_id} "
            "(row 2); not paid"
        )
        assert ledger.batch_summary("p1") == {"CONFLICT": 1}
        assert ledger.payout_instruction("lk-x03") is None
    finally:
        ledger.close()


def test_a_paid_link_payout_corrected_to_failed_is_found_by_the_next_report(
    store: LinkStore, claims: ClaimsServer, sandbox_server, tmp_path: Path
) -> None:
    # The spec: a COMPLETED payout may be corrected with no webhook. The report looked up only
    # unfinished rows, so it kept saying COMPLETED (exit 0) for a payout the platform failed.
    batch_id, path = issue(store, tmp_path, [("fix-1", "u1", "77", "")], claims.url)
    link = httpx.get(read_claims(path)["fix-1"]).headers["location"]
    payout = pay_through_widget(link)["payout"]

    async def refresh() -> Any:
        async with AsyncPayoutsClient(sandbox_server.token, base_url=sandbox_server.url) as client:
            return await refresh_links(client, store, batch_id)

    deadline = time.monotonic() + 30
    while asyncio.run(refresh()) and store.rows(batch_id)[0].state != "COMPLETED":
        assert time.monotonic() < deadline, "the payout did not complete"
        time.sleep(0.1)
    httpx.post(
        f"{sandbox_server.url}/_sandbox/payouts/{payout['id']}/status",
        json={"status": "FAILED", "statusMessage": "Corrected by the platform"},
    ).raise_for_status()
    assert asyncio.run(refresh()).moved == 1
    [view] = store.rows(batch_id)
    assert (view.state, view.corrected) == ("FAILED", True)
    paths, figures = report_links(store, batch_id, tmp_path / "out", sandbox=True)
    assert figures.statuses == {"FAILED": 1} and not figures.all_paid
    # The amount with the currency's decimals, and a number in the workbook.
    assert ",77.00,RUB," in paths.csv.read_text(encoding="utf-8-sig")
    links = load_workbook(paths.xlsx, read_only=True)["Links"]
    [amount] = next(links.iter_rows(min_row=2, max_row=2))[3:4]
    assert (amount.value, amount.number_format) == (77, "#,##0.00")


def test_a_merchant_id_that_is_no_uuid_gets_the_service_page_not_a_server_error(
    store: LinkStore, make_sandbox, tmp_path: Path
) -> None:
    # A service answering merchantId "m-1" made every claim a 500 and a traceback: the widget
    # refuses such a payload, so no link is minted and the recipient reads "try later".
    sandbox = make_sandbox(merchant_id="m-1")
    with (
        PayoutsClient(sandbox.token, base_url=sandbox.url) as client,
        ClaimsServer(store, client, SecretStr(sandbox.token), sandbox.url) as server,
    ):
        _, path = issue(store, tmp_path, [("m-1-row", "u1", "10", "")], server.url)
        answer = httpx.get(read_claims(path)["m-1-row"])
    assert answer.status_code == 503, answer.text
    assert "Сервис временно недоступен" in answer.text


def test_the_claim_page_asks_the_service_again_before_saying_a_payout_was_paid(
    store: LinkStore, claims: ClaimsServer, sandbox_server, tmp_path: Path
) -> None:
    # Found by hand: a links payout corrected to FAILED after completion: the claim page told
    # the recipient "Выплата выполнена" while the widget said it was not; the claims server
    # never asked about a COMPLETED row again.
    batch_id, path = issue(store, tmp_path, [("reck-1", "u1", "55", "")], claims.url)
    claim_url = read_claims(path)["reck-1"]
    device = httpx.Client()  # the recipient's one phone: a claim answers the device that opened it
    payout = pay_through_widget(device.get(claim_url).headers["location"])["payout"]

    async def refresh() -> Any:
        async with AsyncPayoutsClient(sandbox_server.token, base_url=sandbox_server.url) as client:
            return await refresh_links(client, store, batch_id)

    deadline = time.monotonic() + 30
    while asyncio.run(refresh()) and store.rows(batch_id)[0].state != "COMPLETED":
        assert time.monotonic() < deadline, "the payout did not complete"
        time.sleep(0.1)
    assert "Выплата выполнена" in device.get(claim_url).text
    httpx.post(
        f"{sandbox_server.url}/_sandbox/payouts/{payout['id']}/status",
        json={"status": "FAILED", "statusMessage": "Corrected by the platform"},
    ).raise_for_status()
    page = device.get(claim_url)
    assert page.status_code == 200
    assert "Выплата выполнена" not in page.text and "Выплата не выполнена" in page.text
    assert store.rows(batch_id)[0].state == "FAILED"
    device.close()


def test_a_made_payout_a_new_sandbox_does_not_know_is_unconfirmed_never_silence(
    store: LinkStore, claims: ClaimsServer, sandbox_server, make_sandbox, tmp_path: Path
) -> None:
    # Found by hand: `payflow links report` on the embedded sandbox asked a new, empty sandbox,
    # ignored its 404s and kept COMPLETED for a payout corrected to FAILED.
    batch_id, path = issue(store, tmp_path, [("gone-1", "u1", "40", "")], claims.url)
    pay_through_widget(httpx.get(read_claims(path)["gone-1"]).headers["location"])

    async def refresh(server: Any) -> Any:
        async with AsyncPayoutsClient(server.token, base_url=server.url) as client:
            return await refresh_links(client, store, batch_id)

    deadline = time.monotonic() + 30
    while asyncio.run(refresh(sandbox_server)) and store.rows(batch_id)[0].state != "COMPLETED":
        assert time.monotonic() < deadline, "the payout did not complete"
        time.sleep(0.1)
    assert asyncio.run(refresh(sandbox_server)).unconfirmed == ()
    empty = make_sandbox()  # what a later run's embedded sandbox is: it made none of them
    assert asyncio.run(refresh(empty)).unconfirmed == ("gone-1",)
