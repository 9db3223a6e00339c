"""Turning spreadsheet cell values back into the text the operator typed."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

# Excel keeps 15 significant digits; a longer number stored as a number has lost digits.
EXCEL_EXACT_DIGITS = 15


class LostDigitsError(ValueError):
    """A number cell too long for Excel to have stored it exactly (an account typed as a number)."""


def cell_text(value: object) -> str:
    """Text of one cell: integers as exact digits, floats as the shortest round-trip decimal."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def float_text(value: float) -> str:
    """`2250700000000.0` -> `2250700000000`; `0.30000000000000004` is kept (then rejected)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise LostDigitsError("not a number")
    if value.is_integer():
        if abs(value) >= 10**EXCEL_EXACT_DIGITS:
            raise LostDigitsError(
                "a number this long cannot be stored exactly by Excel; format the column as text"
            )
        return str(int(value))
    # repr gives the shortest decimal that reads back as the same float.
    return format(Decimal(repr(value)), "f")
