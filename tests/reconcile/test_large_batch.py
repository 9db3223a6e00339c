"""A 40,000-row batch: the report streams every row and its totals come from SQL GROUP BY."""

from __future__ import annotations

import csv
from decimal import Decimal

import pytest
from sqlalchemy import case, update

from payflow.ledger import Ledger, RowOutcome
from payflow.ledger.tables import Payout
from payflow.model import PayoutInstruction
from payflow.reporting import write_batch_report

# Past every page and chunk the ledger and the report read and write in (20,000 at most) and past
# SQLite's 32,766 bound parameters of one statement: a larger batch costs the suite's two cores
# more time and finds nothing more; bench/bench_report.py measures larger ones.
ROWS = 40_000


def _instructions() -> list[PayoutInstruction]:
    return [
        PayoutInstruction(
            row_number=n,
            external_id=f"big-{n}",
            amount=Decimal(n % 997) + Decimal("0.25"),
            currency="RUB" if n % 2 else "XOF",
            payment_type="SIM",
            requisites=f"2250700{n:06d}",
            name="Awa Kone",
            user_id=f"u{n}",
        )
        for n in range(2, ROWS + 2)
    ]


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_forty_thousand_rows_are_reported_with_sql_totals(tmp_path) -> None:
    instructions = _instructions()
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("big", "big.csv", instructions, [])
        with ledger._engine.begin() as connection:
            connection.execute(
                update(Payout).values(
                    state=case((Payout.row_number % 10 == 0, "FAILED"), else_="COMPLETED"),
                    status_message=case(
                        (Payout.row_number % 10 == 0, "Recipient not found"), else_=None
                    ),
                )
            )
        totals = {(t.currency, t.outcome): (t.rows, t.amount) for t in ledger.outcome_totals("big")}
        report = write_batch_report(ledger, "big", tmp_path, sandbox=True)

    expected: dict[tuple[str, RowOutcome], tuple[int, Decimal]] = {}
    for row in instructions:
        outcome = RowOutcome.FAILED if row.row_number % 10 == 0 else RowOutcome.PAID
        rows, amount = expected.get((row.currency, outcome), (0, Decimal(0)))
        expected[(row.currency, outcome)] = (rows + 1, amount + row.amount)
    assert totals == expected
    with report.csv.open(newline="", encoding="utf-8-sig") as handle:
        assert sum(1 for _ in csv.reader(handle)) == ROWS + 1
    [failed] = report.summary.failures[:1]
    assert failed.total.status_message == "Recipient not found"
    assert sum(g.total.rows for g in report.summary.failures) == ROWS // 10
