"""Repeats are held (issue 7, item 1): the same recipient, amount and currency paid or in flight
under another externalId within 30 days is never sent until an operator acknowledges it."""

from __future__ import annotations

from dataclasses import astuple
from datetime import timedelta
from decimal import Decimal

import pytest
from ledger_support import FakeClock, instruction, unique
from sqlalchemy import event

from payflow.ledger import EventSource, Ledger, RowState
from payflow.ledger.repeats import HOLD_MESSAGE
from payflow.model import PayoutInstruction

S = RowState


def _recipient(prefix: str) -> PayoutInstruction:
    """A payout to a recipient no other test pays (tests may share one PostgreSQL database)."""
    digits = str(int(prefix.encode().hex(), 16))[-8:]
    return instruction(f"{prefix}-a", 2, requisites=f"22507{digits}")


def _paid(ledger: Ledger, first: PayoutInstruction, status: RowState) -> str:
    batch = unique("b")
    ledger.register_batch(batch, "first.csv", [first], [])
    (claimed,) = ledger.claim_for_submit(batch, "w1", 1)
    ledger.mark_created(claimed.external_id, unique("po-"), "CREATED")
    if status is not S.CREATED:
        ledger.record_status(
            external_id=claimed.external_id,
            status=status.value,
            status_message=None,
            source=EventSource.POLL,
        )
    return batch


def _state(ledger: Ledger, batch: str) -> dict[str, RowState]:
    return {str(r.external_id): r.state for r in ledger.batch_rows(batch)}


@pytest.mark.parametrize("status", [S.CREATED, S.PROCESSING, S.COMPLETED])
def test_a_repeat_of_a_paid_or_in_flight_payout_is_held(ledger: Ledger, status: RowState) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, status)
    again = first._replace(external_id=unique("other-"), amount=first.amount * 1)
    other_row = _recipient(unique("r"))._replace(external_id=unique("fresh-"), row_number=3)
    batch = unique("b")

    outcome = ledger.register_batch(batch, "second.csv", [again, other_row], [])

    assert outcome.held == 1
    assert _state(ledger, batch) == {again.external_id: S.HELD, other_row.external_id: S.VALIDATED}
    claimed = ledger.claim_for_submit(batch, "w2", 10)
    assert [c.external_id for c in claimed] == [other_row.external_id]
    (held,) = ledger.held_rows(batch)
    assert (held.row_number, held.external_id) == (2, again.external_id)
    assert (held.earlier_external_id, held.earlier_state) == (first.external_id, status)
    history = [
        (e.from_state, e.to_state, e.source) for e in ledger.status_events(again.external_id)
    ]
    assert history == [(S.VALIDATED, S.HELD, "review")]
    assert ledger.status_events(again.external_id)[0].status_message == HOLD_MESSAGE


def test_the_amount_is_compared_as_a_number(ledger: Ledger) -> None:
    first = _recipient(unique("r"))._replace(amount=Decimal("100"))
    _paid(ledger, first, S.COMPLETED)
    again = first._replace(external_id=unique("other-"), amount=Decimal("100.00"))
    batch = unique("b")
    assert ledger.register_batch(batch, "second.csv", [again], []).held == 1


@pytest.mark.parametrize(
    "change",
    [
        {"amount": "100.01"},
        {"currency": "KES"},
        {"requisites": "2250799999999", "user_id": "someone-else", "name": "Kouadio Yao"},
    ],
)
def test_another_amount_currency_or_person_is_not_a_repeat(
    ledger: Ledger, change: dict[str, str]
) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    values: dict[str, object] = dict(change)
    if "amount" in values:
        values["amount"] = Decimal(change["amount"])
    again = first._replace(external_id=unique("other-"), **values)  # type: ignore[arg-type]
    batch = unique("b")
    assert ledger.register_batch(batch, "second.csv", [again], []).held == 0
    assert _state(ledger, batch) == {again.external_id: S.VALIDATED}


@pytest.mark.parametrize("status", [S.FAILED, S.CANCELED, S.EXPIRED])
def test_a_repeat_of_a_payout_that_did_not_pay_is_not_held(
    ledger: Ledger, status: RowState
) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, status)
    again = first._replace(external_id=unique("other-"))
    assert ledger.register_batch(unique("b"), "second.csv", [again], []).held == 0


def test_a_payout_completed_over_30_days_ago_is_not_a_repeat(
    ledger: Ledger, clock: FakeClock
) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    clock.now += timedelta(days=30, seconds=1)
    again = first._replace(external_id=unique("other-"))
    assert ledger.register_batch(unique("b"), "second.csv", [again], []).held == 0


def test_same_externalid_again_is_already_known_not_held(ledger: Ledger) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    outcome = ledger.register_batch(unique("b"), "same.csv", [first], [])
    assert outcome.held == 0 and len(outcome.already_known) == 1


def test_acknowledging_releases_held_rows_and_later_registrations_are_not_held(
    ledger: Ledger,
) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    again = first._replace(external_id=unique("other-"))
    batch = unique("b")
    ledger.register_batch(batch, "second.csv", [again], [])
    assert _state(ledger, batch) == {again.external_id: S.HELD}

    assert ledger.acknowledge_repeats(batch) == 1
    assert ledger.acknowledge_repeats(batch) == 0  # twice is harmless
    assert _state(ledger, batch) == {again.external_id: S.VALIDATED}
    assert ledger.held_rows(batch) == []
    # Registering the same batch again (a rerun) does not hold what the operator allowed.
    assert ledger.register_batch(batch, "second.csv", [again], []).held == 0
    (claimed,) = ledger.claim_for_submit(batch, "w2", 1)
    assert claimed.external_id == again.external_id


def test_an_acknowledgement_before_registering_means_nothing_is_held(ledger: Ledger) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, S.CREATED)
    batch = unique("b")
    assert ledger.acknowledge_repeats(batch) == 0
    again = first._replace(external_id=unique("other-"))
    assert ledger.register_batch(batch, "second.csv", [again], []).held == 0


def test_rows_of_one_batch_never_hold_each_other(ledger: Ledger) -> None:
    first = _recipient(unique("r"))
    twin = first._replace(external_id=unique("twin-"), row_number=3)
    batch = unique("b")
    ledger.register_batch(batch, "twins.csv", [first, twin], [])
    claimed = ledger.claim_for_submit(batch, "w1", 1)
    ledger.mark_created(claimed[0].external_id, unique("po-"), "CREATED")
    # A rerun of the batch (after a crash) must not hold the twin its own first run sent.
    assert ledger.register_batch(batch, "twins.csv", [first, twin], []).held == 0


def test_the_hold_is_one_statement_that_uses_the_repeat_key_index(sqlite_url: str) -> None:
    statements: list[tuple[str, object]] = []
    with Ledger.open(sqlite_url) as ledger:
        first = _recipient(unique("r"))
        _paid(ledger, first, S.COMPLETED)
        engine = ledger._engine

        def remember(_conn, _cursor, statement, parameters, _context, _many):  # type: ignore[no-untyped-def]
            if statement.startswith("UPDATE payouts SET state"):
                statements.append((statement, parameters))

        event.listen(engine, "before_cursor_execute", remember)
        again = first._replace(external_id=unique("other-"))
        assert ledger.register_batch(unique("b"), "second.csv", [again], []).held == 1
        event.remove(engine, "before_cursor_execute", remember)
        ((statement, parameters),) = statements
        with engine.connect() as connection:
            plan = connection.exec_driver_sql(
                "EXPLAIN QUERY PLAN " + statement,
                parameters,  # type: ignore[arg-type]
            ).all()
    assert any("ix_payouts_repeat_key" in str(row) for row in plan), plan


# -- repeats by person, not only by requisites (issue 36, items 1 and 2) ------------------------


def _sbp(prefix: str) -> PayoutInstruction:
    """An SBP payout of 900.00 RUB to a phone (79...) and a person no other test pays."""
    phone = "79" + str(int(prefix.encode().hex(), 16))[-9:]
    return instruction(
        f"{prefix}-a",
        2,
        amount="900.00",
        currency="RUB",
        payment_type="SBP",
        requisites=phone,
        bank_name="100000000111",
    )


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"requisites": "2250799999999"}, id="corrected-requisites"),
        pytest.param({"requisites": "2250799999998", "user_id": "another-id"}, id="same-name-only"),
        pytest.param(
            {"requisites": "2250799999997", "name": "Someone Else"}, id="same-user-id-only"
        ),
    ],
)
def test_the_same_person_paid_the_same_amount_is_held_whatever_the_requisites(
    ledger: Ledger, change: dict[str, str]
) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    again = first._replace(external_id=unique("other-"), **change)  # type: ignore[arg-type]
    batch = unique("b")

    assert ledger.register_batch(batch, "second.csv", [again], []).held == 1
    (held,) = ledger.held_rows(batch)
    assert held.earlier_external_id == first.external_id
    old, new = first.requisites[-4:], again.requisites[-4:]
    assert held.differs.startswith(f"requisites …{old} -> …{new}")
    assert ("userId" in held.differs) == ("user_id" in change)
    assert ("name" in held.differs.removeprefix("requisites")) == ("name" in change)


def test_a_name_is_compared_in_any_case_and_spacing(ledger: Ledger) -> None:
    first = _recipient(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    name = "  " + first.name.upper().replace(" ", "   ") + " "
    again = first._replace(
        external_id=unique("other-"), requisites="2250799999996", user_id="x", name=name
    )
    assert ledger.register_batch(unique("b"), "second.csv", [again], []).held == 1


@pytest.mark.parametrize("form", ["8{}", "{}"])
def test_an_sbp_phone_written_another_way_is_the_same_recipient(ledger: Ledger, form: str) -> None:
    # Another userId and name: only the phone's canonical form (79...) makes it a repeat.
    first = _sbp(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    written = form.format(first.requisites[1:])  # 89... or 9...
    again = first._replace(
        external_id=unique("other-"), requisites=written, user_id=unique("u"), name=unique("n")
    )
    batch = unique("b")
    assert ledger.register_batch(batch, "second.csv", [again], []).held == 1
    (held,) = ledger.held_rows(batch)
    assert held.differs.startswith("requisites written another way")


def test_the_same_externalid_with_the_phone_written_another_way_is_already_known(
    ledger: Ledger,
) -> None:
    first = _sbp(unique("r"))
    _paid(ledger, first, S.COMPLETED)
    outcome = ledger.register_batch(
        unique("b"), "again.csv", [first._replace(requisites="8" + first.requisites[1:])], []
    )
    assert (outcome.new, len(outcome.already_known), outcome.conflicts) == (0, 1, [])


# -- rows of one file paying one person twice (twins), at any batch size ------------------------


def test_twins_name_the_first_row_of_their_recipient_amount_and_currency(ledger: Ledger) -> None:
    prefix = unique("tw")
    one = instruction(f"{prefix}-a", 2)
    two = instruction(f"{prefix}-e", 6, amount="7.00")
    rows = [
        one,
        instruction(f"{prefix}-b", 3),
        one._replace(external_id=f"{prefix}-c", row_number=4),
        one._replace(external_id=f"{prefix}-d", row_number=5),
        two,
        two._replace(external_id=f"{prefix}-f", row_number=7),
    ]
    batch = unique("b")
    ledger.register_batch(batch, "twins.csv", rows, [])
    assert [astuple(t) for t in ledger.twin_rows(batch)] == [
        (4, f"{prefix}-c", 2, f"{prefix}-a"),
        (5, f"{prefix}-d", 2, f"{prefix}-a"),
        (7, f"{prefix}-f", 6, f"{prefix}-e"),
    ]


@pytest.mark.postgres
def test_twins_read_the_batch_once_whatever_postgresql_knows_of_the_table(
    postgres_url: str,
) -> None:
    # The self-join it replaced met a table PostgreSQL had not analysed yet (autovacuum off, or
    # not yet run after a large batch) with a nested loop over every pair of rows: 6.4 s at
    # 4,000 rows, hours at 100,000, in every approval check.
    with Ledger.open(postgres_url) as ledger:
        batch = unique("b")
        ledger.register_batch(
            batch, "many.csv", [instruction(unique("m"), n) for n in range(2, 60)], []
        )
        statements: list[tuple[str, object]] = []

        def remember(_conn, _cursor, statement, parameters, _context, _many):  # type: ignore[no-untyped-def]
            statements.append((statement, parameters))

        engine = ledger._engine
        event.listen(engine, "before_cursor_execute", remember)
        assert ledger.twin_rows(batch) == []
        event.remove(engine, "before_cursor_execute", remember)
        ((statement, parameters),) = statements
        with engine.connect() as connection:
            (plan,) = connection.exec_driver_sql(
                "EXPLAIN (FORMAT JSON) " + statement,
                parameters,  # type: ignore[arg-type]
            ).one()
    scans = str(plan).count("'Relation Name': 'payouts'")
    assert scans == 1, plan
