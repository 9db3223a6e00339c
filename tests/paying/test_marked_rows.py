"""Rows a maker's process registered without their bank or service checked (it held no API
token, issue 35): never handed out for sending while marked, and checked by the paying process
against a real sandbox first, by the intake's own rules."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path

from paying_support import make_client

from payflow.intake import read_batch_file
from payflow.intake.kept import keep_fetched, kept_banks, kept_lookups
from payflow.intake.lookups import BankInfo, ServiceInfo
from payflow.ledger import Ledger, RowState
from payflow.ledger.kept_lists import mark_unchecked, unchecked_rows
from payflow.model import PayoutInstruction
from payflow.paying.precheck import check_marked_rows
from payflow.sandbox import SandboxServer
from payflow.schemas.validation import validate_rows

SBERBANK = "100000000111"  # the sandbox's id of "Сбербанк"


def _sbp(external_id: str, row: int, phone: str, bank: str) -> PayoutInstruction:
    return PayoutInstruction(
        row_number=row,
        external_id=external_id,
        amount=Decimal(100 * row),
        currency="RUB",
        payment_type="SBP",
        requisites=phone,
        name=f"Anna Petrova {row}",
        user_id=f"u-{row}",
        bank_name=bank,
    )


def _sim(external_id: str, row: int, service_id: int | None) -> PayoutInstruction:
    return PayoutInstruction(
        row_number=row,
        external_id=external_id,
        amount=Decimal(1000 * row),
        currency="XOF",
        payment_type="SIM",
        requisites=f"22507000000{row:02d}",
        name=f"Awa Kone {row}",
        user_id=f"w-{row}",
        service_id=service_id,
    )


def test_validation_with_kept_lists_marks_only_what_they_cannot_check(tmp_path: Path) -> None:
    batch = tmp_path / "b.csv"
    batch.write_text(
        "externalId,amount,currency,paymentType,requisites,name,userId,bankName\n"
        f"k-1,500,RUB,SBP,79001230001,Anna,u-1,{SBERBANK}\n"
        "k-2,500,RUB,SBP,79001230001,Vera,u-2,Bank of Nowhere\n"
        f"k-3,500,RUB,SBP,79001230009,Olga,u-3,{SBERBANK}\n"
        "k-4,900,XOF,SIM,2250700000001,Awa,u-4,\n",
        encoding="utf-8",
    )
    raw = read_batch_file(batch)
    with Ledger.open(f"sqlite:///{tmp_path / 'l.sqlite3'}") as ledger:
        nothing_kept = kept_lookups(ledger, ["79001230001", "79001230009"])
        assert nothing_kept.services is None and nothing_kept.oldest is None
        first = validate_rows(
            raw, services=None, banks_for_phones=kept_banks(nothing_kept), strict=False
        )
        # Nothing kept: every row waits for the paying process (the SBP ones for their bank).
        assert first.rejects == []
        assert first.unchecked == {2: "bank,service", 3: "bank,service", 4: "bank,service"} | {
            5: "service"
        }
        keep_fetched(
            ledger,
            [ServiceInfo(101, "SBP", "RUB"), ServiceInfo(201, "SIM", "XOF")],
            {"79001230001": [BankInfo(SBERBANK, "Сбербанк")]},
        )
        kept = kept_lookups(ledger, ["79001230001", "79001230009"])
        second = validate_rows(raw, services=kept.services, banks_for_phones=kept_banks(kept))
    assert kept.oldest is not None and set(kept.banks) == {"79001230001"}
    assert [(p.row, p.rule) for p in second.rejects] == [(3, "sbp_bank_not_found")]
    assert second.unchecked == {4: "bank"}  # the one phone never looked up
    assert "SBP banks of 1 phone never looked up" in " ".join(kept.notes(["79001230009"]))


def test_marked_rows_are_not_claimed_until_the_paying_check_unmarks_or_refuses_them(
    tmp_path: Path, sandbox_server: SandboxServer
) -> None:
    rows = [
        _sbp("m-1", 2, "79001230001", SBERBANK),
        _sbp("m-2", 3, "79001230002", "Сбербанк"),  # a name: resolved to its id
        _sbp("m-3", 4, "79001230003", "Bank of Nowhere"),
        _sbp("m-4", 5, "79001230000", SBERBANK),  # the sandbox has no bank for ...0000
        _sim("m-5", 6, 999),  # no such service
        _sim("m-6", 7, None),  # checked at intake: never marked
    ]
    with Ledger.open(f"sqlite:///{tmp_path / 'l.sqlite3'}") as ledger:
        ledger.register_batch("marked", "m.csv", rows, [])
        marks = {row.external_id: "bank" for row in rows[:4]} | {"m-5": "service"}
        mark_unchecked(ledger, "marked", marks)
        claimed = ledger.claim_for_submit("marked", "w1", 10)
        assert [c.external_id for c in claimed] == ["m-6"]
        assert ledger.claim_for_submit("marked", "w1", 10) == []

        async def check() -> object:
            async with make_client(sandbox_server) as client:
                return await check_marked_rows(client, ledger, "marked")

        done = asyncio.run(check())
        assert (done.passed, done.refused) == (2, 3)  # type: ignore[attr-defined]
        assert unchecked_rows(ledger, "marked") == {}
        states = ledger.batch_summary("marked")
        assert states == {"SUBMITTING": 1, "VALIDATED": 2, "SUBMIT_REJECTED": 3}
        again = ledger.claim_for_submit("marked", "w1", 10)
        assert {c.external_id: c.instruction.bank_name for c in again} == {
            "m-1": SBERBANK,
            "m-2": SBERBANK,
        }
        messages = {ext: ledger.status_events(ext)[-1] for ext in ("m-3", "m-4", "m-5")}
        assert all(e.to_state is RowState.SUBMIT_REJECTED for e in messages.values())
        assert "checked before sending: bankName: no bank for this phone has the id or name" in (
            messages["m-3"].status_message or ""
        )
        assert "sbp_no_bank_for_phone" in (messages["m-4"].status_message or "")
        assert "serviceId: serviceId is not among the payout services" in (
            messages["m-5"].status_message or ""
        )
        # What the paying process fetched is kept for the makers' processes.
        kept = kept_lookups(ledger, ["79001230002"])
        assert kept.services is not None and "79001230002" in kept.banks
