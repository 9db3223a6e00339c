"""Turning spreadsheet cell values back into the text the operator typed."""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal
from functools import cache

# Excel keeps 15 significant digits; a longer number stored as a number has lost digits.
EXCEL_EXACT_DIGITS = 15


class LostDigitsError(ValueError):
    """A number cell too long for Excel to have stored it exactly (an account typed as a number)."""


# OOXML's escape of a character XML cannot carry (`_x000B_` is a vertical tab; `_x005F_` is `_`,
# so `_x005F_x000B_` is the text `_x000B_`): Excel shows the character, openpyxl returns the
# escape as it is. Unescaped here, the one step from a cell to its text, so validation judges
# what the operator saw (a control character: rejected), whichever reader read the cell.
_OOXML_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


def _unescaped(text: str) -> str:
    if "_x" not in text:
        return text
    return _OOXML_ESCAPE.sub(lambda found: chr(int(found.group(1), 16)), text)


def cell_text(value: object) -> str:
    """Text of one XLSX cell as Excel shows it: `_xHHHH_` escapes read as their character,
    integers as exact digits, floats as the shortest round-trip decimal."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _unescaped(value)
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


def shown_text(value: int | float, number_format: str | None) -> str | None:
    """What a number cell shows under its number format when that is another number than it
    holds (`1500%` for 15, `1501` for 1500.6 under `#,##0`), else None.

    A spreadsheet computes with what the cell holds, but the operator reads what it shows: an
    amount typed as 1500 into a percent-formatted column holds 15, and would be paid as 15.
    Formats that fix no number of decimals (General, text, scientific, fractions) show the
    value itself."""
    shape = _format_shape(number_format or "General")
    if shape is None:
        return None
    percent, decimals, thousands = shape
    held = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    shown = held * 100 if percent else held.scaleb(-3 * thousands)
    rounded = shown.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    if not percent and not thousands and rounded == held:
        return None
    return f"{rounded:f}{'%' if percent else ''}"


def fixes_decimals(number_format: str | None) -> bool:
    """Whether a number under this format may show another number than it holds
    (`shown_text` may say so): the format fixes how many decimals it shows."""
    return _format_shape(number_format or "General") is not None


_LITERAL = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.')
_PLACEHOLDER = "0#?"


@cache
def _format_shape(number_format: str) -> tuple[bool, int, int] | None:
    """(shows a percentage, decimals shown, thousands scaled away by trailing commas) of the
    format's first section (the one for positive numbers), or None when it fixes no decimals."""
    section = _LITERAL.sub("", number_format).split(";")[0]
    if not any(c in section for c in _PLACEHOLDER) or any(c in section for c in "Ee/@"):
        return None  # General, text, scientific, fractions: the value as it is
    whole, _, fraction = section.partition(".")
    decimals = 0
    for character in fraction:
        if character not in _PLACEHOLDER:
            break
        decimals += 1
    # A comma right after the last digit of the whole part divides by 1,000 (`#,##0,` shows
    # 1500000 as 1,500); a comma between digits only groups them.
    last = max(whole.rfind(c) for c in _PLACEHOLDER)
    thousands = len(whole[last + 1 :]) - len(whole[last + 1 :].lstrip(","))
    return "%" in section, decimals, thousands
