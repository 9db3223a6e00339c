"""Rules that need one column only (the general rules of a batch), and the helper columns.

Cross-column rules (`payflow.schemas.destination_checks`) read three helper columns computed once
per batch: `_cents` (exact integer cents of the amount, -1 when malformed), `_dest` (index of the
row's destination rule in the table, -1 when none applies) and `_kind` (the destination whose
requisites rule and bankName requirement apply: `_dest`, or for a known paymentType whose
currency fits none of its destinations, one of them when they all agree on those two).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from payflow.schemas.iso4217 import ISO_4217_CODES
from payflow.schemas.requisites import EMAIL_PATTERN
from payflow.schemas.rules import ANY_CURRENCY, RulesTable
from payflow.schemas.text_checks import (
    URL_PATTERN,
    amount_cents,
    at_most,
    blank,
    cells,
    distinct_keys,
    filled,
    fullmatch_where,
    ip_addresses,
    matches,
    no_control_characters,
    no_edge_spaces,
    unique,
)

CENTS, DEST, KIND = "_cents", "_dest", "_kind"
TEMPLATE_EXAMPLE_PREFIX = "example-"
"""The externalIds of `payflow template`'s example rows: such a row is never paid."""
MAX_ID_LENGTH = 255
SERVICE_ID_PATTERN = "[0-9]{1,18}"
"""A serviceId cell: ASCII digits only (`str.isdigit` takes '²', which is no number to send)."""
# Longest cell the API takes per column; the spec pins 255 for externalId and userId, and the
# others follow what their values can be (an e-mail address, an IPv6, a URL, a note).
MAX_LENGTHS = {
    "externalId": MAX_ID_LENGTH,
    "userId": MAX_ID_LENGTH,
    "name": 255,
    "requisites": 255,
    "bankName": 255,
    "userEmail": 254,
    "userPhone": 32,
    "userIp": 45,
    "callbackUrl": 2048,
    "note": 1000,
}
# RFC 3986 `pchar` without percent-escapes: an externalId made of these is one URL path segment
# as it is, so GET /v1/payouts/external/{externalId} finds exactly this payout.
EXTERNAL_ID_CHARACTER = r"[A-Za-z0-9._~!$&'()*+,;=:@-]"
EXTERNAL_ID_CHARACTERS = EXTERNAL_ID_CHARACTER + "+"
DOT_SEGMENTS = (".", "..")
_ZERO_LOST_BIK = "4[0-9]{7}"  # every bik starts 04: a number column keeps 8 digits of it


SeriesCheck = Callable[[pd.Series], pd.Series]
ColumnRule = tuple[str, str, SeriesCheck]  # rule name, message, check


def _not_dot_segment(series: pd.Series) -> pd.Series:
    # A cell that is a dot segment shows in the column joined by line breaks: one scan decides
    # the usual column.
    joined = "\n" + "\n".join(cells(series).tolist()) + "\n"
    if "\n.\n" not in joined and "\n..\n" not in joined:
        return pd.Series(True, index=series.index)
    return ~series.isin(DOT_SEGMENTS)


# An externalId that fits one URL path segment as written (GET .../external/{externalId}):
# the same rules for payout, refund and links files, so no row the service could never be
# asked about is sent, and none is looked up (a rejected `..` broke its batch's reconcile).
EXTERNAL_ID_PATH_RULES: list[ColumnRule] = [
    ("external_id_spaces", "externalId starts or ends with a space", no_edge_spaces),
    (
        "external_id_characters",
        "externalId may hold only Latin letters, digits and . _ ~ - ! $ & ' ( ) * + , ; "
        "= : @ (no spaces, slashes, % or other characters): the API looks payouts up "
        "by it in a URL path",
        lambda s: _external_id_characters(s),  # defined below, with its helpers
    ),
    (
        "external_id_dot_segment",
        "externalId cannot be '.' or '..' (a URL path would read it as a folder step)",
        _not_dot_segment,
    ),
]


def prepare(frame: pd.DataFrame, table: RulesTable) -> pd.DataFrame:
    """The batch with the helper columns `_cents`, `_dest` and `_kind` added."""
    # Look up each distinct (paymentType, currency) pair once, not each row.
    pair_codes, pairs = distinct_keys(cells(frame["paymentType"]), cells(frame["currency"]))
    dest_of_pair = np.array(
        [destination_index(table, payment_type, currency) for payment_type, currency in pairs],
        dtype=np.int64,
    )
    prepared = frame.copy(deep=False)
    prepared[CENTS] = amount_cents(frame["amount"])
    prepared[DEST] = pd.Series(dest_of_pair[pair_codes], index=frame.index)
    kind_of_pair = np.array(
        [
            dest if dest >= 0 else type_destination(table, payment_type)
            for dest, (payment_type, _) in zip(dest_of_pair.tolist(), pairs, strict=True)
        ],
        dtype=np.int64,
    )
    prepared[KIND] = pd.Series(kind_of_pair[pair_codes], index=frame.index)
    return prepared


def type_destination(table: RulesTable, payment_type: str) -> int:
    """Index of a destination of `payment_type` whose requisites rule and bankName requirement
    every destination of that type shares, else -1.

    A row whose currency is wrong for its paymentType (SBP in USD) is still checked for its
    requisites and bankName: the SBP phone rule does not depend on the currency, and the
    operator who fixes the currency should not only then learn that the phone is wrong too."""
    found = [i for i, d in enumerate(table.destinations) if d.payment_type == payment_type]
    shared = {
        (table.destinations[i].requisites_rule, table.destinations[i].bank_id_required)
        for i in found
    }
    return found[0] if len(shared) == 1 else -1


def destination_index(table: RulesTable, payment_type: str, currency: str) -> int:
    """Index of the table's rule for a paymentType and currency (a `*` row for any ISO code)."""
    fallback = -1
    for index, rule in enumerate(table.destinations):
        if rule.payment_type != payment_type:
            continue
        if rule.currency == currency:
            return index
        if rule.currency == ANY_CURRENCY and currency in ISO_4217_CODES:
            fallback = index
    return fallback


def column_rules(table: RulesTable) -> dict[str, list[ColumnRule]]:
    """Per column: (rule, message, check) for the rules that need only that column."""
    types = sorted(table.payment_types)
    rules: dict[str, list[ColumnRule]] = {
        "amount": [
            # Its format and sign are checked on the exact cents
            # (payflow.schemas.destination_checks).
            ("amount_present", "amount is required", filled),
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
            (
                "user_id_spaces",
                "userId starts or ends with a space, which would be sent as part of it (the "
                "service would know another user than without it): remove the space",
                # Rejected, never trimmed: a derived externalId is computed from userId as
                # written, and trimming would give a row registered before a new id (paid twice).
                # A tab or line break at an edge is named by no_control_characters alone.
                _user_id_without_edge_spaces,
            ),
        ],
        "externalId": [
            *EXTERNAL_ID_PATH_RULES,
            (
                "external_id_unique",
                "externalId appears in more than one row; every such row is rejected",
                unique,
            ),
            (
                "template_example",
                f"an example row of payflow template (externalId {TEMPLATE_EXAMPLE_PREFIX}...): "
                "delete it; its recipient is made up",
                _not_template_example,
            ),
        ],
        "serviceId": [
            (
                "service_id_integer",
                "serviceId must be a whole number",
                lambda s: matches(s, SERVICE_ID_PATTERN),
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
                "bik_leading_zero_lost",
                "bik has 8 digits starting 4: it looks like a bik (9 digits starting 04) whose "
                "leading zero a spreadsheet dropped, reading the column as numbers; format the "
                "column as Text and type the bik with its 0",
                lambda s: ~_zero_lost_bik(s),
            ),
            (
                "bik_format",
                "bik must be 9 digits starting with 04",
                _bik_format,
            ),
        ],
    }
    for column, rule in length_rules().items():
        rules.setdefault(column, []).append(rule)
    return rules


def length_rules() -> dict[str, ColumnRule]:
    """Per column with a limit: its `<column>_length` rule (a 20 MB name is a reject, not paid)."""
    return {
        column: (
            f"{_snake(column)}_length",
            f"{column} is longer than {limit} characters",
            _at_most(limit),
        )
        for column, limit in MAX_LENGTHS.items()
    }


def _snake(column: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in column)


def _user_id_without_edge_spaces(series: pd.Series) -> pd.Series:
    ok = no_edge_spaces(series)
    if ok.all():
        return ok  # the usual column, decided by one scan
    # A blank userId is user_id_present's; a tab or line break at an edge is named by
    # no_control_characters alone.
    return ok | blank(series) | ~no_control_characters(series)


def _bik_format(series: pd.Series) -> pd.Series:
    ok = matches(series, "04[0-9]{7}")
    if ok.all():
        return ok
    return ok | _zero_lost_bik(series)  # a lost leading zero is named by its own rule


def _not_template_example(series: pd.Series) -> pd.Series:
    # One scan of the joined column decides the usual case: no cell starts with the prefix.
    if f"\n{TEMPLATE_EXAMPLE_PREFIX}" not in "\n" + "\n".join(cells(series).tolist()):
        return pd.Series(True, index=series.index)
    return ~series.str.startswith(TEMPLATE_EXAMPLE_PREFIX)


def _external_id_characters(series: pd.Series) -> pd.Series:
    # Every cell is empty or made of these characters exactly when the whole column is: one
    # scan of the joined column decides the usual case.
    if re.fullmatch(EXTERNAL_ID_CHARACTER + "*", "".join(cells(series).tolist())):
        return pd.Series(True, index=series.index)
    result = matches(series, EXTERNAL_ID_CHARACTERS)
    if result.all():
        return result
    # Edge spaces and control characters have their own rules: reported there, once.
    failed = series[~result]
    judged = no_edge_spaces(failed) & no_control_characters(failed)
    result[judged.index[~judged]] = True
    return result


def external_id_path_problems(
    ids: pd.Series, skip: frozenset[str] = frozenset()
) -> dict[int, list[tuple[str, str]]]:
    """Row -> (rule, message) of each EXTERNAL_ID_PATH_RULES rule its id breaks (blank ids,
    and the rules in `skip`, not judged): for a file whose rules are not a pandera schema."""
    broken: dict[int, list[tuple[str, str]]] = {}
    filled = ids[ids.astype(str) != ""].astype(str)
    for rule, message, check in EXTERNAL_ID_PATH_RULES:
        if rule in skip or filled.empty:
            continue
        passed = check(filled)
        for row in filled.index[~passed.to_numpy(dtype=bool)].tolist():
            broken.setdefault(int(row), []).append((rule, message))
    return broken


def _zero_lost_bik(series: pd.Series) -> pd.Series:
    values = cells(series)
    filled_in = values != ""
    lost = fullmatch_where(values, filled_in, _ZERO_LOST_BIK) & filled_in
    return pd.Series(lost, index=series.index)


def _at_most(length: int) -> SeriesCheck:
    return lambda s: at_most(s, length)
