"""Rules that depend on the row's destination (paymentType and currency), read from the table.

Each check sees the prepared frame (with `_cents`, `_dest` and `_kind`) and returns True where
the row passes or the rule does not apply; a rule applies only where the cells it builds on are
well formed, so one mistake is reported once, under its own rule. The requisites, bankName and
account key rules read `_kind`, so a currency wrong for the row's paymentType does not hide
them; the step, wallet country code and currency rules depend on the currency and read `_dest`.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from itertools import repeat

import numpy as np
import pandas as pd

from payflow.schemas.column_rules import CENTS, DEST, KIND
from payflow.schemas.iso4217 import ISO_4217_CODES, currency_decimals
from payflow.schemas.requisites import REQUISITES_RULES, account_key_matches
from payflow.schemas.rules import ANY_CURRENCY, AmountLimit, RulesTable
from payflow.schemas.text_checks import (
    AMOUNT_PATTERN,
    blank,
    cells,
    distinct_keys,
    fullmatch,
    fullmatch_flags,
    fullmatch_where,
)

AMOUNT_MESSAGE = (
    "amount must be a number with a point and at most two decimals, "
    "like 1500 or 1500.50 (no spaces, commas or exponents)"
)
NEGATIVE_AMOUNT = rf"-{AMOUNT_PATTERN}"
# More than two decimals: what a spreadsheet's binary float leaves (1500.0000000000002).
LONG_DECIMALS = r"[0-9]{1,13}\.[0-9]{3,}"
FrameCheck = Callable[[pd.DataFrame], pd.Series]
FrameRule = tuple[str, str, str, FrameCheck]  # rule name, column, message, check


def destination_rules(table: RulesTable) -> list[FrameRule]:
    """Every cross-column rule the table implies, in the order they are reported."""
    rules: list[FrameRule] = [
        ("amount_format", "amount", AMOUNT_MESSAGE, _amount_format_check),
        (
            "amount_positive",
            "amount",
            "amount must be positive (greater than zero)",
            lambda f: (f[CENTS] != 0) & ~_malformed_where(f, NEGATIVE_AMOUNT),
        ),
        (
            "amount_decimals",
            "amount",
            "amount has more than two decimals; a long tail like 1500.0000000002 is a "
            "spreadsheet rounding artefact: round the cell to cents",
            lambda f: ~_malformed_where(f, LONG_DECIMALS),
        ),
        ("currency_for_destination", "currency", _currency_message(table), _currency_check(table)),
    ]
    for name in sorted({d.requisites_rule for d in table.destinations}):
        rule = REQUISITES_RULES[name]
        rows = [i for i, d in enumerate(table.destinations) if d.requisites_rule == name]
        rules.append(
            (f"requisites_{name}", "requisites", rule.message, _pattern(rows, rule.pattern))
        )
    rules += [
        ("wallet_country_code", "requisites", _prefix_message(table), _prefix_check(table)),
        ("amount_step", "amount", _step_message(table), _step_check(table)),
        (
            "amount_currency_decimals",
            "amount",
            "amount has decimals, but its currency has none (ISO 4217: JPY, KRW, XAF and others)",
            _currency_decimals_check(table),
        ),
        (
            "amount_minimum",
            "amount",
            "amount is below the minimum for this destination",
            _limit_check(table.limits, low=True),
        ),
        (
            "amount_maximum",
            "amount",
            "amount is above the maximum for this destination",
            _limit_check(table.limits, low=False),
        ),
        (
            "bank_name_required",
            "bankName",
            "bankName is required for SBP payouts: a bank id or "
            "a bank name from the banks list for this phone",
            _bank_check(table),
        ),
        (
            "account_check_key",
            "requisites",
            "account number does not fit the bik "
            "(its check key is wrong): a digit is mistyped in the account or in the bik",
            _account_key_check(table),
        ),
    ]
    return rules


def _malformed_where(frame: pd.DataFrame, pattern: str) -> pd.Series:
    """True where the amount is not well formed but matches `pattern` (a cause of its own)."""
    found = pd.Series(False, index=frame.index)
    unread = frame[CENTS].to_numpy() < 0
    if not unread.any():
        return found  # the usual batch: every amount read, no text compared
    malformed = unread & (cells(frame["amount"]) != "")
    if malformed.any():
        found[malformed] = fullmatch(frame.loc[malformed, "amount"], pattern)
    return found


def _amount_format_check(frame: pd.DataFrame) -> pd.Series:
    read = frame[CENTS].to_numpy() >= 0
    if read.all():
        return pd.Series(read, index=frame.index)  # every amount well formed
    # A negative amount or a float artefact is named by its own rule, not as a bad format.
    own_cause = _malformed_where(frame, NEGATIVE_AMOUNT) | _malformed_where(frame, LONG_DECIMALS)
    return (frame["amount"] == "") | (frame[CENTS] >= 0) | own_cause


def _dest_where(table: RulesTable, predicate: Callable[..., bool]) -> list[int]:
    return [i for i, d in enumerate(table.destinations) if predicate(d)]


def _currency_check(table: RulesTable) -> FrameCheck:
    types = table.payment_types

    def check(frame: pd.DataFrame) -> pd.Series:
        # An unknown paymentType or a non-ISO currency is its own rule: reported once, there.
        applies = frame["currency"].isin(ISO_4217_CODES) & frame["paymentType"].isin(types)
        return ~applies | (frame[DEST] >= 0)

    return check


def _pattern(rows: list[int], pattern: str) -> FrameCheck:
    def check(frame: pd.DataFrame) -> pd.Series:
        requisites = cells(frame["requisites"])
        applies = np.isin(frame[KIND].to_numpy(), rows) & (requisites != "")
        return pd.Series(fullmatch_where(requisites, applies, pattern), index=frame.index)

    return check


def _prefix_check(table: RulesTable) -> FrameCheck:
    prefixes = {i: d.phone_prefixes for i, d in enumerate(table.destinations) if d.phone_prefixes}

    def check(frame: pd.DataFrame) -> pd.Series:
        ok = np.ones(len(frame), dtype=bool)
        destinations = frame[DEST].to_numpy()
        requisites = cells(frame["requisites"])
        for index, starts in prefixes.items():
            rows = np.flatnonzero(destinations == index)
            phones = requisites[rows].tolist()
            prefixed = np.fromiter(map(str.startswith, phones, repeat(starts)), bool, len(phones))
            # Only for well-formed digits: a malformed phone is reported by its pattern rule.
            unprefixed = np.flatnonzero(~prefixed)
            digits = fullmatch_flags(requisites[rows[unprefixed]].tolist(), "[0-9]+")
            ok[rows[unprefixed]] = ~digits
        return pd.Series(ok, index=frame.index)

    return check


def _step_check(table: RulesTable) -> FrameCheck:
    steps = np.array([d.amount_step_cents for d in table.destinations] + [1], dtype=np.int64)

    def check(frame: pd.DataFrame) -> pd.Series:
        step = steps[frame[DEST].to_numpy()]  # -1 picks the trailing 1: no constraint
        cents = frame[CENTS].to_numpy()
        return pd.Series((cents < 0) | (cents % step == 0), index=frame.index)

    return check


def _currency_decimals_check(table: RulesTable) -> FrameCheck:
    """A currency without a minor unit (JPY) paid by a destination whose step allows cents (EMAIL
    pays any currency): 1000.5 JPY cannot be paid as written, and a report shows it as 1,001.
    A destination whose own step already asks for whole amounts (XOF) reports it there, once."""
    steps = np.array([d.amount_step_cents for d in table.destinations] + [100], dtype=np.int64)

    def check(frame: pd.DataFrame) -> pd.Series:
        cents = frame[CENTS].to_numpy()
        codes, currencies = distinct_keys(cells(frame["currency"]))
        whole = np.array([currency_decimals(c) == 0 for (c,) in currencies], dtype=bool)[codes]
        applies = whole & (cents > 0) & (steps[frame[DEST].to_numpy()] % 100 != 0)
        return pd.Series(~applies | (cents % 100 == 0), index=frame.index)

    return check


def _limit_check(limits: tuple[AmountLimit, ...], *, low: bool) -> FrameCheck:
    def check(frame: pd.DataFrame) -> pd.Series:
        result = pd.Series(True, index=frame.index)
        cents = frame[CENTS]
        for limit in limits:
            bound = limit.min_cents if low else limit.max_cents
            if bound is None:
                continue
            rows = (frame["paymentType"] == limit.payment_type) & (cents >= 0)
            if limit.currency != ANY_CURRENCY:
                rows &= frame["currency"] == limit.currency
            if limit.service_id is not None:
                service = frame.get("serviceId", pd.Series("", index=frame.index))
                rows &= service == str(limit.service_id)
            result &= ~rows | ((cents >= bound) if low else (cents <= bound))
        return result

    return check


def _bank_check(table: RulesTable) -> FrameCheck:
    rows = _dest_where(table, lambda d: d.bank_id_required)

    def check(frame: pd.DataFrame) -> pd.Series:
        bank = frame.get("bankName", pd.Series("", index=frame.index))
        return ~frame[KIND].isin(rows) | ~blank(bank)

    return check


def _account_key_check(table: RulesTable) -> FrameCheck:
    rows = _dest_where(table, lambda d: d.requisites_rule == "ru_individual_account")
    pattern = REQUISITES_RULES["ru_individual_account"].pattern

    def check(frame: pd.DataFrame) -> pd.Series:
        ok = np.ones(len(frame), dtype=bool)
        if "bik" not in frame:
            return pd.Series(ok, index=frame.index)
        accounts, biks = cells(frame["requisites"]), cells(frame["bik"])
        candidates = np.flatnonzero(np.isin(frame[KIND].to_numpy(), rows) & (biks != ""))
        well_formed = fullmatch_flags(accounts[candidates].tolist(), pattern) & fullmatch_flags(
            biks[candidates].tolist(), "04[0-9]{7}"
        )
        applies = candidates[well_formed]
        ok[applies] = account_key_matches(accounts[applies].tolist(), biks[applies].tolist())
        return pd.Series(ok, index=frame.index)

    return check


def _currency_message(table: RulesTable) -> str:
    by_type: dict[str, list[str]] = {}
    for d in table.destinations:
        by_type.setdefault(d.payment_type, []).append(
            "any currency" if d.currency == ANY_CURRENCY else d.currency
        )
    allowed = "; ".join(f"{t}: {', '.join(c)}" for t, c in sorted(by_type.items()))
    return f"currency is not enabled for this paymentType ({allowed})"


def _prefix_message(table: RulesTable) -> str:
    codes = "; ".join(
        f"{d.currency}: {' '.join(d.phone_prefixes)}"
        for d in table.destinations
        if d.phone_prefixes
    )
    return f"wallet phone does not start with a country code of the currency ({codes})"


def row_message(rule: str, table: RulesTable, payment_type: str, currency: str) -> str | None:
    """The message of a destination rule for one row's destination, when it has its own:
    "XOF amounts must be a whole multiple of 5" rather than every currency's step."""
    if rule == "amount_currency_decimals":
        return f"{currency} amounts must be whole numbers: {currency} has no minor unit"
    found = [
        d for d in table.destinations if (d.payment_type, d.currency) == (payment_type, currency)
    ]
    if not found:
        return None
    destination = found[0]
    if rule == "amount_step" and destination.amount_step_cents > 1:
        if destination.amount_step_cents == 100:
            return f"{currency} amounts must be whole numbers"
        step = (Decimal(destination.amount_step_cents) / 100).normalize()
        return f"{currency} amounts must be a whole multiple of {step:f}"
    if rule == "wallet_country_code" and destination.phone_prefixes:
        codes = " ".join(destination.phone_prefixes)
        return f"a {currency} wallet number must start with one of its country codes: {codes}"
    return None


def _step_message(table: RulesTable) -> str:
    parts = []
    for d in table.destinations:
        if d.amount_step_cents == 100:
            parts.append(f"{d.currency} whole")
        elif d.amount_step_cents > 1:
            step = Decimal(d.amount_step_cents) / 100
            parts.append(f"{d.currency} a whole multiple of {step.normalize():f}")
    return f"amount does not fit the currency's step ({', '.join(parts)})"
