"""Amounts as Russian Excel writes them in a `;`-separated CSV: `1 500,50` is 1500.50.

Only that exact form is read, and only in a `;` file: a decimal comma with one or two decimals,
or groups of three digits split by a space or no-break space. `1,500` is never guessed at: it
stays as written and is rejected with its own message. Nor is `1.500`, a point between thousands
as German or Italian Excel writes them: rejected as `amount_thousands_point`, naming both readings.
"""

from __future__ import annotations

import pandas as pd

from payflow.intake.problems import FILE_ROW, Problem

_GROUP_SPACE = "[ \u00a0\u202f]"
_GROUPED = rf"[0-9]{{1,3}}(?:{_GROUP_SPACE}[0-9]{{3}})+"
RUSSIAN_AMOUNT = rf"(?:{_GROUPED}|[0-9]+),[0-9]{{1,2}}|{_GROUPED}"
DECIMAL_COMMA_RULE = "amount_decimal_comma"
THOUSANDS_POINT_RULE = "amount_thousands_point"
_THOUSANDS_POINT = r"[0-9]{1,3}(?:\.[0-9]{3})+(?:,[0-9]{1,2})?"
_AMBIGUOUS_POINT = (
    "amount {value}: a point before three digits is how German or Italian Excel writes {whole}, "
    "but it also reads as {decimal}; payflow does not guess: write {whole} or {decimal_comma}"
)
_THOUSANDS_POINTS = "amount {value} has a point between thousands: write it {plain} or {spaced}"


def read_decimal_commas(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[Problem], list[Problem]]:
    """The frame with Russian-form amounts rewritten with a point, a notice of how many, and a
    reject for each amount with a point between thousands (left as written)."""
    if "amount" not in frame:
        return frame, [], []
    amounts = frame["amount"]
    pointed = amounts.str.fullmatch(_THOUSANDS_POINT)
    rejects = [
        Problem(row, "amount", THOUSANDS_POINT_RULE, _thousands_point(value), value=value)
        for row, value in zip(frame.index[pointed].tolist(), amounts[pointed], strict=True)
    ]
    russian = amounts.str.fullmatch(RUSSIAN_AMOUNT)
    count = int(russian.sum())
    if not count:
        return frame, [], rejects
    rewritten = amounts.copy()
    rewritten[russian] = (
        amounts[russian].str.replace(_GROUP_SPACE, "", regex=True).str.replace(",", ".")
    )
    notice = Problem(
        FILE_ROW,
        "amount",
        DECIMAL_COMMA_RULE,
        f"{count} amount(s) were read in the Russian Excel form of a ;-separated file: "
        "decimal comma and space thousands separators (1 500,50 read as 1500.50)",
    )
    return frame.assign(amount=rewritten), [notice], rejects


def read_russian_amounts(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[Problem]]:
    """The frame with Russian-form amounts rewritten with a point (a refund or links file of a
    `;` CSV), and the notice of how many, which the operator is told as a payout file's; any
    other amount stays as written, for the file's own rule to reject."""
    frame, notices, _ = read_decimal_commas(frame)
    return frame, notices


def _thousands_point(value: str) -> str:
    """Why `1.500` (or `1.500,50`) is not read, in the form the operator wrote it."""
    whole, comma, cents = value.partition(",")
    integer, _, fraction = whole.partition(".")
    if not comma and "." not in fraction:  # 1.500: fifteen hundred, or one and a half
        decimal = f"{integer},{fraction.rstrip('0')}".rstrip(",")
        return _AMBIGUOUS_POINT.format(
            value=value,
            whole=integer + fraction,
            decimal=decimal.replace(",", "."),
            decimal_comma=decimal,
        )
    return _THOUSANDS_POINTS.format(
        value=value,
        plain=whole.replace(".", "") + comma + cents,
        spaced=whole.replace(".", " ") + comma + cents,
    )
