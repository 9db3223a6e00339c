"""Vectorised checks over text columns; each returns a boolean Series, True where the cell is fine.

Empty cells pass every check here: whether a cell is required is its own rule.
"""

from __future__ import annotations

import ipaddress
import re
from functools import cache

import numpy as np
import pandas as pd

from payflow.intake.problems import CONTROL_PATTERN

AMOUNT_PATTERN = r"[0-9]{1,13}(?:\.[0-9]{1,2})?"
URL_PATTERN = r"https?://[^\s/?#]+(?:[/?#]\S*)?"
INVALID_CENTS = -1


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def fullmatch(series: pd.Series, pattern: str) -> pd.Series:
    """True where the whole cell matches `pattern` (a compiled loop: pandas' own is slower)."""
    values = series.tolist()
    found = np.fromiter(map(bool, map(_compiled(pattern).fullmatch, values)), bool, len(values))
    return pd.Series(found, index=series.index)


def blank(series: pd.Series) -> pd.Series:
    """True where the cell is empty or only whitespace."""
    values = series.tolist()
    filled = np.fromiter(map(bool, map(str.strip, values)), bool, len(values))
    return pd.Series(~filled, index=series.index)


def no_edge_spaces(series: pd.Series) -> pd.Series:
    """True where the cell neither starts nor ends with whitespace."""
    values = series.tolist()
    # map over str methods stays in C: three times faster than series.str.strip().
    same = np.fromiter(map(str.__eq__, values, map(str.strip, values)), bool, len(values))
    return pd.Series(same, index=series.index)


def at_most(series: pd.Series, length: int) -> pd.Series:
    """True where the cell has at most `length` characters."""
    values = series.tolist()
    lengths = np.fromiter(map(len, values), np.int64, len(values))
    return pd.Series(lengths <= length, index=series.index)


def matches(series: pd.Series, pattern: str) -> pd.Series:
    """True where the whole cell matches `pattern`, or the cell is empty."""
    result = pd.Series(True, index=series.index)
    given = series != ""
    if given.any():
        result[given] = fullmatch(series[given], pattern)
    return result


def no_control_characters(series: pd.Series) -> pd.Series:
    """True where the cell has no line break, tab or other control character."""
    control = _compiled(CONTROL_PATTERN).search
    # One scan of the whole column first: a clean column, the usual case, costs one C call.
    if control("".join(series.tolist())) is None:
        return pd.Series(True, index=series.index)
    return ~pd.Series([control(v) is not None for v in series.tolist()], index=series.index)


def amount_cents(series: pd.Series) -> pd.Series:
    """Exact integer cents of amounts written like `1500` or `1500.5`; INVALID_CENTS otherwise."""
    # Amounts repeat in a payout batch (the same fee, the same salary): parse each once.
    codes, distinct = pd.factorize(series, use_na_sentinel=False)
    cents = _distinct_cents(pd.Series(distinct, dtype=object)).to_numpy()
    return pd.Series(cents[codes], index=series.index)


def _distinct_cents(series: pd.Series) -> pd.Series:
    ok = fullmatch(series, AMOUNT_PATTERN)
    cents = pd.Series(INVALID_CENTS, index=series.index, dtype=np.int64)
    text = series[ok]
    if text.empty:
        return cents
    dot = text.str.find(".")
    decimals = np.where(dot >= 0, text.str.len() - dot - 1, 0)
    digits = text.str.replace(".", "", regex=False).astype(np.int64)
    cents[ok] = digits.to_numpy() * (10 ** (2 - decimals))
    return cents


def ip_addresses(series: pd.Series) -> pd.Series:
    """True where the cell is an IPv4 or IPv6 address (or empty)."""
    result = pd.Series(True, index=series.index)
    given = series[series != ""]
    if not given.empty:  # assigning an empty list to a bool Series raises (a whole-column crash)
        result[given.index] = pd.Series([_is_ip(v) for v in given.tolist()], index=given.index)
    return result


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
