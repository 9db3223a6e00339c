"""A rejected row keeps the currency its cell named, so reports count it under that currency."""

from __future__ import annotations

from schema_rows import row, validate

from payflow.intake.to_ledger import rejected_rows


def test_a_rejected_row_keeps_its_currency_only_when_the_cell_is_an_iso_code() -> None:
    report = validate(
        row("SIM", amount="abc"),  # row 2: KES from the base row, amount broken
        row("SIM", currency="kes", amount="100"),  # row 3: not a code as written
        row("SIM", currency="XYZ", amount="100"),  # row 4: no such currency
        row("SIM", currency="", amount="100"),  # row 5: none given
        row("SIM"),  # row 6: valid, so not a reject at all
    )
    assert sorted({p.row for p in report.rejects}) == [2, 3, 4, 5]
    assert len(report.instructions) == 1
    given = row("SIM")["currency"]
    assert {n: cells.currency for n, cells in report.reject_cells.items()} == {
        2: given,
        3: None,
        4: None,
        5: None,
    }
    ledger_rows = {r.row_number: r.currency for r in rejected_rows(report)}
    assert ledger_rows == {2: given, 3: None, 4: None, 5: None}
