"""Amounts as a spreadsheet shows them: a number with the currency's decimals (XOF 0, RUB 2)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from openpyxl.cell.cell import WriteOnlyCell

from payflow.schemas.iso4217 import amount_text, currency_decimals, quantized


def number_format(currency: str | None) -> str:
    """The Excel number format for amounts of the currency."""
    places = currency_decimals(currency)
    return "#,##0" if places == 0 else "#,##0." + "0" * places


def money_text(amount: Decimal | None, currency: str | None) -> str:
    """An amount as a CSV cell: the currency's decimals ("25.00", "1500" XOF), "" for none."""
    return "" if amount is None else amount_text(amount, currency)


def money_cell(sheet: Any, amount: Decimal | None, currency: str | None) -> Any:
    """An amount as an XLSX cell: a number shown with the currency's decimals (a spreadsheet
    sums it; text would not), empty for none."""
    # openpyxl writes a Decimal as the number it is; its stubs know only float.
    value: Any = None if amount is None else quantized(amount, currency)
    cell = WriteOnlyCell(sheet, value=value)
    cell.number_format = number_format(currency)
    return cell


def shown_width(amount: Decimal, currency: str | None) -> int:
    """Characters the amount takes as `number_format` shows it ("1,000,000,000.00": 16)."""
    return len(f"{quantized(amount, currency):,}")
