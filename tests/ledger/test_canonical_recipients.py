"""Canonical recipients in a ledger written before them (issue 36, item 1; invariant 11).

A derived externalId now hashes the recipient's canonical form (`89351230001` is `79351230001`).
A row paid before that change was given its id from the phone as written: reading the same file
again must find that payout, never derive a new id for it (a new id is a second payment). And a
payout registered before the change must be found as a repeat of the same phone written another
way once the ledger is migrated (its stored repeat key is recomputed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from alembic import command
from ledger_support import unique
from sqlalchemy import create_engine, insert

from payflow.intake import batch_from_rows
from payflow.intake.identity import derived_external_ids
from payflow.intake.lookups import BankInfo, ServiceInfo
from payflow.intake.to_ledger import register_report
from payflow.ledger import EventSource, Ledger, RowState
from payflow.ledger.db import alembic_config
from payflow.ledger.tables import Batch, Payout
from payflow.model import PayoutInstruction, repeat_key
from payflow.tasks.validate_batch import validate_rows

BANK = BankInfo("100000000111", "Банк")
HEADER = ["amount", "currency", "paymentType", "requisites", "name", "userId", "bankName"]


def _banks(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
    return {phone: [BANK] for phone in phones}


def _rows(phone: str, person: str) -> list[list[str]]:
    return [HEADER, ["900.00", "RUB", "SBP", phone, person, person, BANK.id]]


def _paid(ledger: Ledger, instruction: PayoutInstruction) -> None:
    batch = unique("old")
    ledger.register_batch(batch, "old.csv", [instruction], [])
    (claimed,) = ledger.claim_for_submit(batch, "w1", 1)
    ledger.mark_created(claimed.external_id, unique("po-"), "CREATED")
    ledger.record_status(
        external_id=claimed.external_id,
        status="COMPLETED",
        status_message=None,
        source=EventSource.POLL,
    )


def test_a_row_paid_under_its_first_derived_id_is_found_again(ledger_url: str) -> None:
    person = unique("p")
    phone = "89" + str(int(person.encode().hex(), 16))[-9:]
    rows = _rows(phone, person)
    raw = batch_from_rows(rows, "payouts.csv")
    first_id = str(derived_external_ids(raw.frame, canonical=False).iloc[0])
    report = validate_rows(raw, services=[ServiceInfo(1, "SBP", "RUB")], banks_for_phones=_banks)
    (row,) = report.instructions
    assert row.external_id != first_id  # the id derived now hashes 79...: it changed
    with Ledger.open(ledger_url) as ledger:
        # What the ledger holds from before the change: the payout under its first id.
        _paid(ledger, row._replace(external_id=first_id))

        outcome = register_report(ledger, report)

        assert (outcome.new, outcome.held) == (0, 0)
        assert [k.external_id for k in outcome.already_known] == [first_id]


def test_a_payout_of_a_ledger_migrated_from_0017_is_a_repeat_of_the_phone_written_anew(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    now = datetime.now(UTC)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0017")
        connection.execute(
            insert(Batch.__table__).values(
                batch_id="b-old", source_name="old.csv", total_rows=1, valid_rows=1,
                rejected_rows=0, created_at=now,
            )
        )  # fmt: skip
        # Written by the code of revision 0017: the key over the phone as written (89...).
        connection.execute(
            insert(Payout.__table__).values(
                external_id="paid-before", batch_id="b-old", row_number=2, content_hash="x",
                amount=Decimal("900.00"), currency="RUB", payment_type="SBP",
                requisites="89351230001",
                name="Ivan Petrov", user_id="u-1", bank_name=BANK.id, state="COMPLETED",
                attempts=1, corrected=False, created_at=now, updated_at=now, attempt=0,
                repeat_key=repeat_key(
                    requisites="89351230001", amount=Decimal("900.00"), currency="RUB"
                ),
            )
        )  # fmt: skip
    engine.dispose()
    new = PayoutInstruction(
        row_number=2, external_id="new-id", amount=Decimal(900), currency="RUB",
        payment_type="SBP", requisites="79351230001", name="Someone Else", user_id="u-2",
        bank_name=BANK.id,
    )  # fmt: skip
    with Ledger.open(url) as ledger:  # migrates to head
        assert ledger.register_batch("b-new", "new.csv", [new], []).held == 1
        (held,) = ledger.held_rows("b-new")
        assert (held.earlier_external_id, held.earlier_state) == ("paid-before", RowState.COMPLETED)
