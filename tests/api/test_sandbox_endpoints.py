"""Every endpoint family over real HTTP against the sandbox, with the sync and the async client."""

from __future__ import annotations

import asyncio
import time
import uuid
from decimal import Decimal

import httpx
import pytest
from api_sandbox_support import EitherClient
from api_support import FAST_RETRY, payout_request

from payflow.api import AsyncPayoutsClient, PayoutsClient
from payflow.api.errors import ConflictError
from payflow.api.models import Card, Customer, OrderRequest, RefundRequest

DEADLINE = 5.0


@pytest.fixture(params=["sync", "async"])
async def api(request, sandbox_server):
    kind = PayoutsClient if request.param == "sync" else AsyncPayoutsClient
    client = EitherClient(
        kind(sandbox_server.token, base_url=sandbox_server.url, timeout=5.0, retry=FAST_RETRY)
    )
    yield client
    await client.close()


async def wait_for(fetch, done, what: str):
    """Poll `fetch()` until `done(result)`; fails the test after DEADLINE seconds."""
    deadline = time.monotonic() + DEADLINE
    while True:
        result = await fetch()
        if done(result):
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not finish: {result!r}")
        await asyncio.sleep(0.02)


def ext(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:10]}"


async def sbp_request(api, external_id: str, requisites: str = "79001234567", amount="100.50"):
    """An SBP payout request whose bank comes from the service's banks list for the phone."""
    banks = await api.list_banks(requisites)
    return payout_request(external_id, amount, requisites, bank_name=banks[0].id)


async def test_sbp_payout_from_banks_list_to_final_status(api):
    services = await api.list_services()
    sbp = next(s for s in services if s.payment_type == "SBP" and s.currency == "RUB")
    banks = await api.list_banks("+79001234567")
    assert banks and all(bank.id for bank in banks)
    assert await api.list_banks("79001230000") == []
    before = (await api.get_balance()).available_by_currency()
    assert before is not None and "RUB" in before

    request = await sbp_request(api, ext("sbp"), amount="1234.56")
    request = request.model_copy(update={"service_id": int(sbp.id)})
    created = await api.create_payout(request)
    assert created.status == "CREATED" and created.amount == Decimal("1234.56")

    after = (await api.get_balance()).available_by_currency()
    assert after is not None and before["RUB"] - after["RUB"] == Decimal("1234.56")
    assert (await api.get_payout(created.id)).id == created.id
    by_external = await api.get_payout_by_external_id(request.external_id)
    assert by_external.id == created.id
    assert await api.find_payout_by_external_id(ext("never-sent")) is None
    final = await wait_for(lambda: api.get_payout(created.id), lambda p: p.is_final, "payout")
    assert final.status == "COMPLETED" and final.completed_at is not None


async def test_failed_payout_carries_its_reason(api):
    created = await api.create_payout(await sbp_request(api, ext("fail"), "79001231111"))
    final = await wait_for(lambda: api.get_payout(created.id), lambda p: p.is_final, "payout")
    assert final.status == "FAILED" and final.status_message == "Recipient account is blocked"


async def test_external_id_with_reserved_characters_round_trips(api):
    external_id = ext("batch/7 row#3?x=1&y")
    created = await api.create_payout(await sbp_request(api, external_id))
    assert (await api.get_payout_by_external_id(external_id)).id == created.id
    assert (await api.find_payout_by_external_id(external_id + "/")) is None


async def test_wallet_order_and_hosted_order(api):
    wallet = await api.create_order(
        OrderRequest(
            amount=Decimal("99.90"),
            currency="RUB",
            external_id=ext("wallet"),
            extra_params="walletApay",
            customer=Customer(email="payer@example.com", ip="203.0.113.7"),
        )
    )
    assert wallet.status == "CREATED" and wallet.payment_link
    assert wallet.amount == Decimal("99.90")
    fetched = await api.get_order(wallet.id)
    assert fetched.id == wallet.id and fetched.extra_params == "walletApay"


async def test_h2h_card_wrong_then_right_code(api, sandbox_server):
    order = await api.create_order(OrderRequest(amount=Decimal("10"), currency="RUB"))
    card = Card(
        cardholder_name="IVAN PETROV",
        card_number="4111111111111111",
        cvv="123",
        expiry_date="12/30",
    )
    accepted = await api.submit_card(order.id, card)
    assert accepted.id == order.id
    status = await api.get_h2h_status(order.id)
    assert status.is_sms_required is True and not status.is_final
    await api.submit_h2h_code(order.id, "000000")
    assert (await api.get_h2h_status(order.id)).is_sms_required is True  # wrong code: asked again
    answer = await api.submit_h2h_code(order.id, sandbox_server.config.h2h_sms_code)
    assert answer is None or isinstance(answer, dict)
    status = await api.get_h2h_status(order.id)
    assert status.status == "SUCCESS" and status.is_final
    done = await wait_for(
        lambda: api.get_order(order.id), lambda o: o.status == "COMPLETED", "order"
    )
    assert done.status == "COMPLETED"


async def test_refund_of_a_completed_order(api, sandbox_server):
    order = await api.create_order(OrderRequest(amount=Decimal("250.00"), currency="RUB"))
    with pytest.raises(ConflictError, match="not COMPLETED"):
        await api.create_refund(RefundRequest(order_id=order.id))
    httpx.post(f"{sandbox_server.url}/_sandbox/orders/{order.id}/complete").raise_for_status()
    external_id = ext("refund")
    refund = await api.create_refund(
        RefundRequest(order_id=order.id, amount=Decimal("250.00"), external_id=external_id)
    )
    assert refund.status in ("PENDING", "MANUAL") and refund.debit_amount == Decimal("250.00")
    assert (await api.get_refund(refund.id)).order_id == order.id
    assert (await api.get_refund_by_external_id(external_id)).id == refund.id
    # Refused while active ("already exists") or, on a loaded machine where it has completed by
    # now, because the order is REFUND: a second refund of one order is a conflict either way.
    with pytest.raises(ConflictError, match=r"already exists|order is REFUND") as caught:
        await api.create_refund(RefundRequest(order_id=order.id, external_id=external_id))
    assert caught.value.status_code == 409
    final = await wait_for(
        lambda: api.get_refund(refund.id), lambda r: r.status == "COMPLETED", "refund"
    )
    assert final.completed_at is not None
    assert (await api.get_order(order.id)).status == "REFUND"
