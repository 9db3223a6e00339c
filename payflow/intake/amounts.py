"""Amounts as Russian Excel writes them in a `;`-separated CSV: `1 500,50` is 1500.50.

Only that exact form is read, and only in a `;` file: a decimal comma with one or two decimals,
or groups of three digits split by a space or no-break space. `1,500` is never guessed at: it
stays as written and is rejected with its own message.
"""

from __future__ import annotations

import pandas as pd

from payflow.intake.problems import FILE_ROW, Problem

_GROUP_SPACE = "[ \u00a0\u202f]"
_GROUPED = rf"[0-9]{{1,3}}(?:{_GROUP_SPACE}[0-9]{{3}})+"
RUSSIAN_AMOUNT = rf"(?:{_GROUPED}|[0-9]+),[0-9]{{1,2}}|{_GROUPED}"
DECIMAL_COMMA_RULE = "amount_decimal_comma"


def read_decimal_commas(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[Problem]]:
    """The frame with Russian-form amounts rewritten with a point, and a notice of how many."""
    if "amount" not in frame:
        return frame, []
    amounts = frame["amount"]
    russian = amounts.str.fullmatch(RUSSIAN_AMOUNT)
    count = int(russian.sum())
    if not count:
        return frame, []
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
    return frame.assign(amount=rewritten), [notice]
