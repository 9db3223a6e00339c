"""Each discrepancy kind appears when the sandbox produces it and is resolved when it goes."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import httpx
import openpyxl
import pytest
from reconcile_support import (
    QUIET,
    instruction,
    move,
    new_id,
    pay,
    payout_id,
    reconcile,
    register,
)
from sqlalchemy import update

import payflow.reconcile.run as reconcile_run
from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.ledger.tables import Payout
from payflow.reconcile import ReconcileOptions, reconcile_batch
from payflow.redact import mask_requisites
from payflow.reporting.reconciliation import write_batch_report


def _post_behind_our_back(server, row) -> None:
    """Create the row's payout at the service directly, as a POST whose answer was lost."""
    body = {
        "amount": "10",
        "currency": "XOF",
        "paymentType": "SIM",
        "externalId": row.external_id,
        "account": {"name": row.name, "requisites": row.requisites, "userId": row.user_id},
    }
    headers = {"X-Api-Token": server.token}
    httpx.post(f"{server.url}/v1/payouts", json=body, headers=headers).raise_for_status()


async def test_a_quiet_batch_has_no_findings(client, ledger: Ledger) -> None:
    batch = register(
        ledger,
        [
            instruction(new_id("q"), n, last4)
            for n, last4 in [(2, "0001"), (3, "1111"), (4, "3333"), (5, "4444")]
        ],
    )
    await pay(client, ledger, batch)
    assert await reconcile(client, ledger, batch) == set()


async def test_progress_hears_the_rows_reconciled_after_each_page(
    client, ledger: Ledger, monkeypatch
) -> None:
    batch = register(ledger, [instruction(new_id("pg"), n, "0001") for n in range(2, 7)])
    await pay(client, ledger, batch)
    monkeypatch.setattr(reconcile_run, "PAGE_ROWS", 2)
    heard: list[tuple[int, int]] = []

    await reconcile_batch(
        client, ledger, batch, QUIET, lambda done, rows: heard.append((done, rows))
    )

    assert heard == [(2, 5), (4, 5), (5, 5)]


async def test_status_amount_and_stuck_appear_and_resolve(
    client, ledger: Ledger, sandbox_server
) -> None:
    rows = [
        instruction(new_id("s"), 2, "1111"),  # FAILED: moved to COMPLETED behind our back
        instruction(new_id("s"), 3, "0001"),  # COMPLETED: its amount changes at the service
        instruction(new_id("s"), 4, "5555"),  # stays PROCESSING: stuck
    ]
    batch = register(ledger, rows)
    await pay(client, ledger, batch)
    strict = ReconcileOptions(stuck_after={"*": timedelta(0)}, concurrency=4)
    assert await reconcile(client, ledger, batch, strict) == {(4, "stuck")}

    move(sandbox_server, payout_id(ledger, batch, 2), status="COMPLETED")
    move(sandbox_server, payout_id(ledger, batch, 3), amount="11")
    found = await reconcile(client, ledger, batch, strict)
    assert found == {(2, "status_differs"), (3, "amount_differs"), (4, "stuck")}
    # Money as every other amount of the report shows it: the currency's decimals, then its code.
    [differs] = [f for f in ledger.findings(batch) if f.kind == "amount_differs"]
    assert differs.detail == "ledger 15 XOF, service 11 XOF"

    move(
        sandbox_server,
        payout_id(ledger, batch, 2),
        status="FAILED",
        statusMessage="Recipient account is blocked",
    )
    move(sandbox_server, payout_id(ledger, batch, 3), amount="15")
    move(sandbox_server, payout_id(ledger, batch, 4), status="COMPLETED")
    assert await reconcile(client, ledger, batch, strict) == set()
    history = ledger.finding_events(next(f.id for f in ledger.findings(batch) if f.row_number == 2))
    assert [e.to_state for e in history] == ["open", "resolved"]


async def test_missing_at_the_service_appears_and_resolves(
    client, ledger: Ledger, make_sandbox
) -> None:
    batch = register(ledger, [instruction(new_id("m"), 2, "0001")])
    await pay(client, ledger, batch)
    other = make_sandbox()  # a service that never saw the payout
    async with AsyncPayoutsClient(other.token, base_url=other.url, timeout=5.0) as elsewhere:
        assert await reconcile(elsewhere, ledger, batch) == {(2, "missing_at_service")}
    assert await reconcile(client, ledger, batch) == set()


async def test_unexpected_at_the_service_appears_then_resolves_once_adopted(
    client, ledger: Ledger, sandbox_server
) -> None:
    row = instruction(new_id("u"), 2, "0001")
    batch = register(ledger, [row])
    _post_behind_our_back(sandbox_server, row)
    assert await reconcile(client, ledger, batch) == {(2, "unexpected_at_service")}
    await pay(client, ledger, batch)  # the submit protocol finds it by externalId and adopts it
    assert await reconcile(client, ledger, batch) == set()


async def test_a_row_left_submitting_is_looked_up_and_its_payout_named_until_a_pay_run_records_it(
    client, ledger: Ledger, sandbox_server
) -> None:
    # A pay run killed between its POSTs and their answers left rows SUBMITTING; reconcile
    # never looked them up, so 80 payouts the service had made were reported pending.
    made = instruction(new_id("d"), 2, "0001")
    unsent = instruction(new_id("d"), 3, "0001")
    batch = register(ledger, [made, unsent])
    assert len(ledger.claim_for_submit(batch, "killed", 10, lease_seconds=0)) == 2
    _post_behind_our_back(sandbox_server, made)

    assert await reconcile(client, ledger, batch) == {(2, "status_differs")}
    [finding] = ledger.findings(batch)
    assert "still holds it as being sent" in finding.detail and "`payflow pay`" in finding.detail
    await pay(client, ledger, batch)  # resolves both by lookup: adopts one, sends the other
    assert await reconcile(client, ledger, batch) == set()
    stats = httpx.get(f"{sandbox_server.url}/_sandbox/stats").json()["payoutsByExternalId"]
    assert (stats[made.external_id], stats[unsent.external_id]) == (1, 1)


async def test_correction_and_paid_twice_across_a_rerun(
    client, ledger: Ledger, sandbox_server
) -> None:
    original = instruction(new_id("c"), 2, "0001")
    batch = register(ledger, [original])
    await pay(client, ledger, batch)
    move(
        sandbox_server,
        payout_id(ledger, batch, 2),
        status="FAILED",
        statusMessage="Corrected by the platform after a bank-side error",
    )
    assert await reconcile(client, ledger, batch) == {(2, "corrected_after_completion")}

    rerun = instruction(new_id("r"), 2, "0001", amount=original.amount)
    rerun_batch = register(ledger, [rerun])
    with ledger._engine.begin() as connection:
        connection.execute(
            update(Payout)
            .where(Payout.external_id == rerun.external_id)
            .values(reruns_external_id=original.external_id)
        )
    await pay(client, ledger, rerun_batch)
    assert await reconcile(client, ledger, batch) == set()  # the rerun paid the recipient

    # The platform undoes its correction: now two payouts paid one source row.
    move(sandbox_server, payout_id(ledger, batch, 2), status="COMPLETED")
    found = await reconcile(client, ledger, batch)
    assert found == {(2, "paid_twice"), (2, "status_differs")}
    move(sandbox_server, payout_id(ledger, rerun_batch, 2), status="FAILED", statusMessage="x")
    await reconcile(client, ledger, rerun_batch)  # records the rerun's correction
    assert (2, "paid_twice") not in await reconcile(client, ledger, batch)


async def test_an_operator_acknowledges_and_a_later_reconcile_keeps_it(
    client, ledger: Ledger, make_sandbox
) -> None:
    batch = register(ledger, [instruction(new_id("a"), 2, "0001")])
    await pay(client, ledger, batch)
    other = make_sandbox()
    async with AsyncPayoutsClient(other.token, base_url=other.url, timeout=5.0) as elsewhere:
        await reconcile(elsewhere, ledger, batch)
        finding = ledger.findings(batch)[0]
        ledger.acknowledge_finding(batch, finding.id, actor="ops", note="asked the manager")
        await reconcile(elsewhere, ledger, batch, QUIET)
    assert ledger.findings(batch)[0].state == "acknowledged"
    history = ledger.finding_events(finding.id)
    assert [(e.to_state, e.actor, e.detail) for e in history][1] == (
        "acknowledged",
        "ops",
        "asked the manager",
    )


@pytest.mark.parametrize("page_rows", [1, 2, 500])
async def test_every_page_fetched_ahead_is_settled_once(
    client, ledger: Ledger, sandbox_server, monkeypatch: pytest.MonkeyPatch, page_rows: int
) -> None:
    # Each page is fetched while the one before it is written: pages of one and two rows
    # make every row a page boundary.
    monkeypatch.setattr(reconcile_run, "PAGE_ROWS", page_rows)
    rows = [
        instruction(new_id("p"), n, last4)
        for n, last4 in [(2, "0001"), (3, "1111"), (4, "5555"), (5, "0002"), (6, "0003")]
    ]
    batch = register(ledger, rows)
    await pay(client, ledger, batch)
    move(sandbox_server, payout_id(ledger, batch, 3), status="COMPLETED")
    move(sandbox_server, payout_id(ledger, batch, 5), amount="11")
    strict = ReconcileOptions(stuck_after={"*": timedelta(0)}, concurrency=4)
    result = await reconcile_batch(client, ledger, batch, strict)
    assert (result.fetched, result.unanswered) == (5, 0)
    found = {(f.row_number, f.kind) for f in ledger.findings(batch) if f.state != "resolved"}
    assert found == {(3, "status_differs"), (4, "stuck"), (5, "amount_differs")}


async def test_the_next_page_fills_the_slots_a_page_leaves_at_its_end(
    client, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page's last fetches left slots idle until the next page was read and asked for: at
    # 32 in flight and pages of 500, most of a 100,000-row reconciliation's time over its bound.
    monkeypatch.setattr(reconcile_run, "PAGE_ROWS", 2)
    batch = register(ledger, [instruction(new_id("f"), n, "0001") for n in range(2, 8)])
    await pay(client, ledger, batch)
    original = reconcile_run.fetch_payout
    flying: list[int] = [0]
    most: list[int] = [0]
    slots_full = asyncio.Event()

    async def slow(client_, external_id, payout_id_):  # type: ignore[no-untyped-def]
        flying[0] += 1
        most[0] = max(most[0], flying[0])
        if flying[0] == 4:
            slots_full.set()
        try:
            # Each fetch waits (a while at most) until the slots are full: however slow the
            # next page's read, a page's fetches are still in flight when its fetches start.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(slots_full.wait(), 2)
            return await original(client_, external_id, payout_id_)
        finally:
            flying[0] -= 1

    monkeypatch.setattr(reconcile_run, "fetch_payout", slow)
    options = ReconcileOptions(stuck_after={"*": timedelta(hours=1)}, concurrency=4)
    result = await reconcile_batch(client, ledger, batch, options)
    assert (result.fetched, result.unanswered) == (6, 0)
    assert most[0] == 4  # two pages of two in flight at once, never more than the slots


async def test_a_status_message_echoing_requisites_reaches_the_ledger_and_report_masked(
    client, ledger: Ledger, sandbox_server, tmp_path
) -> None:
    # The spec does not say a statusMessage never names the recipient: a bank's "account ...
    # closed" went into the ledger, the report and Prefect's artifact whole (invariant 6).
    row = instruction(new_id("echo"), 2, "0001")
    batch = register(ledger, [row])
    await pay(client, ledger, batch)
    echoed = f"Account {row.requisites} closed; notice sent to awa.kone@example.com"
    move(sandbox_server, payout_id(ledger, batch, 2), status="FAILED", statusMessage=echoed)
    await reconcile(client, ledger, batch)
    stored = next(iter(ledger.batch_rows(batch))).status_message
    masked = mask_requisites(row.requisites), mask_requisites("awa.kone@example.com")
    assert stored == f"Account {masked[0]} closed; notice sent to {masked[1]}"
    report = write_batch_report(ledger, batch, tmp_path, sandbox=True)
    written = report.csv.read_text() + "".join(
        str(cell)
        for sheet in openpyxl.load_workbook(report.xlsx)
        for r in sheet.values
        for cell in r
    )
    assert "closed" in written
    assert row.requisites not in written and "awa.kone@" not in written


@pytest.mark.parametrize("unusable", [".", ".."])
async def test_a_rejected_row_is_never_looked_up_so_an_unusable_id_breaks_nothing(
    client, ledger: Ledger, unusable: str
) -> None:
    # Issue 36, item 3: a rejected row whose externalId is `..` ended every reconcile of its
    # batch (and the run that paid its good rows) in UnusablePathSegment, exit 2.
    from payflow.ledger import RejectedRow

    batch = register(
        ledger,
        [instruction(new_id("ok"), 2, "0001")],
        [RejectedRow(3, unusable, ["externalId: externalId cannot be '.' or '..'"])],
    )
    await pay(client, ledger, batch)
    looked_up: list[str] = []
    original = reconcile_run.fetch_payout

    async def recording(client_, external_id, payout_id_):  # type: ignore[no-untyped-def]
        looked_up.append(external_id)
        return await original(client_, external_id, payout_id_)

    reconcile_run.fetch_payout = recording  # type: ignore[assignment]
    try:
        assert await reconcile(client, ledger, batch) == set()
    finally:
        reconcile_run.fetch_payout = original  # type: ignore[assignment]
    assert unusable not in looked_up and len(looked_up) == 1
