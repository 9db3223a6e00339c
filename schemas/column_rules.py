"""Rules that need one column only (the general rules of a batch), and the helper columns.

Cross-column rules (`schemas.destination_checks`) read two helper columns computed once per
batch: `_cents` (exact integer cents of the amount, -1 when malformed) and `_dest` (index of the
row's destination rule in the table, -1 when none applies).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from schemas.iso4217 import ISO_4217_CODES
from schemas.requisites import EMAIL_PATTERN
from schemas.rules import ANY_CURRENCY, RulesTable
from schemas.text_checks import (
    AMOUNT_PATTERN,
    URL_PATTERN,
    amount_cents,
    blank,
    ip_addresses,
    matches,
)

CENTS, DEST = "_cents", "_dest"
MAX_ID_LENGTH = 255


SeriesCheck = Callable[[pd.Series], pd.Series]
ColumnRule = tuple[str, str, SeriesCheck]  # rule name, message, check


def prepare(frame: pd.DataFrame, table: RulesTable) -> pd.DataFrame:
    """The batch with the helper columns `_cents` and `_dest` added."""
    keys = frame["paymentType"] + "\x1f" + frame["currency"]
    index = {f"{d.payment_type}\x1f{d.currency}": i for i, d in enumerate(table.destinations)}
    wildcard = {
        d.payment_type: i for i, d in enumerate(table.destinations) if d.currency == ANY_CURRENCY
    }
    dest = keys.map(index)
    fallback = frame["paymentType"].map(wildcard).where(frame["currency"].isin(ISO_4217_CODES))
    dest = dest.fillna(fallback).fillna(-1).astype(np.int64)
    return frame.assign(**{CENTS: amount_cents(frame["amount"]), DEST: dest})


def column_rules(table: RulesTable) -> dict[str, list[ColumnRule]]:
    """Per column: (rule, message, check) for the rules that need only that column."""
    types = sorted(table.payment_types)
    return {
        "amount": [
            ("amount_present", "amount is required", lambda s: ~blank(s)),
            (
                "amount_format",
                "amount must be a number with a point and at most two decimals, "
                "like 1500 or 1500.50 (no spaces, commas or exponents)",
                lambda s: matches(s, AMOUNT_PATTERN),
            ),
            (
                "amount_positive",
                "amount must be greater than zero",
                lambda s: (s == "") | (s.str.strip("0.") != ""),
            ),
        ],
        "currency": [
            (
                "currency_iso4217",
                "currency must be an ISO 4217 code in capitals, like RUB or XOF",
                lambda s: s.isin(ISO_4217_CODES),
            )
        ],
        "paymentType": [
            (
                "payment_type_known",
                f"paymentType must be one of {', '.join(types)}",
                lambda s: s.isin(types),
            )
        ],
        "requisites": [("requisites_present", "requisites are required", lambda s: ~blank(s))],
        "name": [("name_present", "name is required", lambda s: ~blank(s))],
        "userId": [
            ("user_id_present", "userId is required", lambda s: ~blank(s)),
            ("user_id_length", "userId is longer than 255 characters", _at_most(MAX_ID_LENGTH)),
        ],
        "externalId": [
            (
                "external_id_length",
                "externalId is longer than 255 characters",
                _at_most(MAX_ID_LENGTH),
            ),
            (
                "external_id_unique",
                "externalId appears in more than one row; every such row is rejected",
                lambda s: ~s.duplicated(keep=False),
            ),
        ],
        "serviceId": [
            (
                "service_id_integer",
                "serviceId must be a whole number",
                lambda s: matches(s, "[0-9]{1,18}"),
            )
        ],
        "userEmail": [
            (
                "user_email_format",
                "userEmail must be an e-mail address",
                lambda s: matches(s, EMAIL_PATTERN),
            )
        ],
        "userIp": [("user_ip_format", "userIp must be an IPv4 or IPv6 address", ip_addresses)],
        "callbackUrl": [
            (
                "callback_url_format",
                "callbackUrl must be an http(s) URL",
                lambda s: matches(s, URL_PATTERN),
            )
        ],
        "bik": [
            (
                "bik_format",
                "bik must be 9 digits starting with 04",
                lambda s: matches(s, "04[0-9]{7}"),
            )
        ],
    }


def _at_most(length: int) -> SeriesCheck:
    return lambda s: s.str.len() <= length
