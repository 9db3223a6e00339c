"""A batch's figures from the ledger: rows per state, what is left to pay, the content hash."""

from __future__ import annotations

from decimal import Decimal

from ledger_support import instruction, instructions, unique

from payflow.ledger import CurrencyTotal, Ledger, RejectedRow


def test_counts_and_totals_follow_the_rows_as_they_move(ledger_url):
    prefix = unique("bc")
    batch = f"{prefix}-batch"
    rows = [
        *instructions(prefix, 3),
        instruction(
            f"{prefix}-rub",
            9,
            "10.50",
            currency="RUB",
            payment_type="SBP",
            requisites="79161234567",
        ),
    ]
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch(batch, "f.csv", rows, [RejectedRow(20, None, ["amount: bad"])])
        counts = ledger.batch_counts(batch)
        assert counts.statuses == {"REJECTED": 1, "VALIDATED": 4}
        assert (counts.rows, counts.new, counts.pending, counts.final) == (5, 4, 0, 1)
        assert counts.to_pay == (
            CurrencyTotal("RUB", "SBP", 1, Decimal("10.50")),
            CurrencyTotal("XOF", "SIM", 3, Decimal(10 + 15 + 20)),
        )
        assert counts.amounts_to_pay() == {"RUB": Decimal("10.50"), "XOF": Decimal(45)}

        claimed = ledger.claim_for_submit(batch, "w", limit=1)
        ledger.mark_created(claimed[0].external_id, "p-1", "COMPLETED")
        after = ledger.batch_counts(batch)
        assert after.completed == 1 and after.new == 3 and after.to_send == 3
        assert after.content_hash == counts.content_hash, "the content did not change"
        assert after.to_pay != counts.to_pay, "the totals to pay did"
        assert not after.all_completed
        # The batch's own figures do not move with its rows (the console's Totals).
        assert ledger.batch_totals(batch) == counts.to_pay


def test_the_content_hash_names_the_batch_and_its_rows(sqlite_url):
    prefix = unique("ch")
    with Ledger.open(sqlite_url) as ledger:
        ledger.register_batch(f"{prefix}-1", "a.csv", instructions(f"{prefix}a", 2), [])
        ledger.register_batch(f"{prefix}-2", "b.csv", instructions(f"{prefix}b", 2), [])
        one, two = ledger.batch_counts(f"{prefix}-1"), ledger.batch_counts(f"{prefix}-2")
        assert one.content_hash != two.content_hash
        assert len(one.content_hash) == 64


def test_totals_add_every_row_exactly_when_amounts_repeat(ledger_url):
    # Summed a distinct amount at a time, with its count: the same figures as row by row.
    prefix = unique("rep")
    amounts = ["0.10", "0.10", "0.20", "1000000.01", "0.10", "7", "7.00", "0.20"]
    rows = [
        instruction(
            f"{prefix}-{n}",
            n + 2,
            amount,
            currency="RUB",
            payment_type="SBP",
            requisites=f"7916{n:07d}",
        )
        for n, amount in enumerate(amounts)
    ]
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch(f"{prefix}-batch", "f.csv", rows, [])
        totals = ledger.batch_counts(f"{prefix}-batch").to_pay
    assert totals == (CurrencyTotal("RUB", "SBP", 8, sum(map(Decimal, amounts))),)
    assert totals[0].amount == Decimal("1000014.71")


def test_rows_above_the_limit_are_exact_at_the_boundary(ledger_url):
    # SQL narrows the rows by a double; whether a row is above its limit is Decimal's answer.
    prefix = unique("above")
    big = Decimal(10) ** 17
    cases = {
        "at": ("XOF", "500000"),
        "cent-over": ("XOF", "500000.01"),
        "cent-under": ("XOF", "499999.99"),
        "big-at": ("RUB", str(big)),
        "big-over": ("RUB", str(big + Decimal("0.01"))),
    }
    rows = [
        instruction(
            f"{prefix}-{name}",
            n + 2,
            amount,
            currency=currency,
            payment_type="SIM" if currency == "XOF" else "SBP",
        )
        for n, (name, (currency, amount)) in enumerate(cases.items())
    ]
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch(f"{prefix}-batch", "f.csv", rows, [])
        above = ledger.rows_above(f"{prefix}-batch", {"XOF": Decimal(500000), "RUB": big})
        only_xof = ledger.rows_above(f"{prefix}-batch", {"XOF": Decimal("499999.98")})
    assert above == [
        (f"{prefix}-big-over", "RUB", big + Decimal("0.01")),
        (f"{prefix}-cent-over", "XOF", Decimal("500000.01")),
    ]
    assert [ext for ext, _, _ in only_xof] == [
        f"{prefix}-at",
        f"{prefix}-cent-over",
        f"{prefix}-cent-under",
    ]


def test_rows_in_states_and_states_of_read_the_states_batch_rows_reads(ledger_url):
    # `payflow status` of a large batch asks for a few rows by state and counts rows by
    # disposition in SQL; each must agree with reading every row.
    from collections import Counter

    from payflow.ledger import Disposition, RowState

    prefix = unique("st")
    first = instructions(prefix, 3)
    with Ledger.open(ledger_url) as ledger:
        ledger.register_batch(f"{prefix}-one", "one.csv", first, [])
        (claimed,) = ledger.claim_for_submit(f"{prefix}-one", "w", limit=1)
        ledger.mark_created(claimed.external_id, unique("p-"), "COMPLETED")
        again = [
            first[0]._replace(row_number=2),  # known, same content: ALREADY_KNOWN, COMPLETED
            first[1]._replace(row_number=3),  # known, same content: ALREADY_KNOWN, VALIDATED
            first[2]._replace(row_number=4, amount=Decimal("999")),  # other content: CONFLICT
            instruction(f"{prefix}-new", 5),
        ]
        batch = f"{prefix}-two"
        ledger.register_batch(batch, "two.csv", again, [RejectedRow(6, None, ["amount: bad"])])
        rows = list(ledger.batch_rows(batch))
        for states in (
            frozenset({RowState.VALIDATED}),
            frozenset({RowState.COMPLETED, RowState.REJECTED}),
            frozenset({RowState.CONFLICT, RowState.HELD, RowState.SUBMITTING}),
            frozenset(RowState),
        ):
            expected = [(r.row_number, r.external_id, r.state) for r in rows if r.state in states]
            assert ledger.rows_in_states(batch, states) == expected
        for disposition in Disposition:
            by_reading = Counter(r.state for r in rows if r.disposition is disposition)
            assert ledger.states_of(batch, disposition) == dict(by_reading)
        assert ledger.has_unfinished(batch) == bool(ledger.unfinished(batch))
        assert ledger.has_unfinished(batch) and not ledger.has_unfinished(unique("none-"))
        assert ledger.states_of(batch, Disposition.ALREADY_KNOWN) == {
            RowState.COMPLETED: 1,
            RowState.VALIDATED: 1,
        }
