"""The pandera schema of a refund batch: every broken rule at once, with row, column and rule.

Cells are text; the frame's index is the spreadsheet row. Only the file is checked here; the
checks against the service (the order exists, is COMPLETED, its amount) come after, per order.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from payflow.intake.problems import Problem
from payflow.schemas.column_rules import EXTERNAL_ID_PATH_RULES
from payflow.schemas.text_checks import (
    AMOUNT_PATTERN,
    URL_PATTERN,
    blank,
    matches,
    no_control_characters,
    no_edge_spaces,
)

MAX_EXTERNAL_ID = 255
MAX_REASON = 1000
UUID_PATTERN = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
CONTROL_RULE = "no_control_characters"

SeriesCheck = Callable[[pd.Series], pd.Series]


def _at_most(length: int) -> SeriesCheck:
    return lambda s: s.str.len() <= length


def _positive(s: pd.Series) -> pd.Series:
    return ~s.str.fullmatch(r"0*(?:\.0*)?") | (s == "")


# column -> (rule, message, check); a check is True where the cell is fine
REFUND_RULES: dict[str, list[tuple[str, str, SeriesCheck]]] = {
    "orderId": [
        ("order_id_present", "orderId is required", lambda s: ~blank(s)),
        (
            "order_id_spaces",
            "orderId starts or ends with a space: remove the space",
            lambda s: no_edge_spaces(s) | blank(s),
        ),
        # A UUID pasted with a space beside it read "must be a UUID": the rule above names it.
        (
            "order_id_uuid",
            "orderId must be a UUID",
            lambda s: matches(s.str.strip(), UUID_PATTERN),
        ),
        (
            "order_id_unique",
            "the order is refunded by more than one row; every such row is rejected",
            # Two rows without an orderId name no order twice: "required" says it, once.
            lambda s: blank(s) | ~s.str.lower().duplicated(keep=False),
        ),
    ],
    "externalId": [
        (
            "external_id_length",
            f"externalId is longer than {MAX_EXTERNAL_ID} characters",
            _at_most(MAX_EXTERNAL_ID),
        ),
        *EXTERNAL_ID_PATH_RULES,
        (
            "external_id_unique",
            "externalId appears in more than one row; every such row is rejected",
            lambda s: ~s.duplicated(keep=False),
        ),
    ],
    "amount": [
        (
            "amount_format",
            "amount must be a number with at most 2 decimals, like 1500 or 1500.50",
            lambda s: matches(s, AMOUNT_PATTERN),
        ),
        ("amount_positive", "amount must be greater than zero", _positive),
    ],
    "reason": [
        (
            "reason_length",
            f"reason is longer than {MAX_REASON} characters",
            _at_most(MAX_REASON),
        ),
    ],
    "callbackUrl": [
        (
            "callback_url_format",
            "callbackUrl must be an http(s) URL",
            lambda s: matches(s, URL_PATTERN),
        )
    ],
}
MESSAGES = {
    CONTROL_RULE: "contains a line break, tab or other control character",
    **{rule: message for rules in REFUND_RULES.values() for rule, message, _ in rules},
}


def refund_schema(columns: list[str]) -> pa.DataFrameSchema:
    """The schema for a refund batch that carries `columns` (canonical names)."""
    schema_columns = {}
    for column in columns:
        checks = [pa.Check(no_control_characters, name=CONTROL_RULE, ignore_na=False)]
        checks += [
            pa.Check(fn, name=rule, ignore_na=False) for rule, _, fn in REFUND_RULES.get(column, [])
        ]
        schema_columns[column] = pa.Column(None, checks=checks, nullable=True)
    return pa.DataFrameSchema(schema_columns, name="refund batch")


def refund_problems(frame: pd.DataFrame) -> list[Problem]:
    """Every rule the frame breaks, ordered by row then column; empty when it is clean."""
    try:
        refund_schema(list(frame.columns)).validate(frame, lazy=True)
    except SchemaErrors as errors:
        cases = errors.failure_cases
    else:
        return []
    problems: dict[tuple[int, str, str], Problem] = {}
    for rule, column, index in zip(cases["check"], cases["column"], cases["index"], strict=True):
        if index is None or pd.isna(index):
            raise RuntimeError(f"refund check {rule} failed as a whole")
        row = int(index)
        key = (row, str(column), str(rule))
        problems.setdefault(
            key,
            Problem(
                row=row,
                column=str(column),
                rule=str(rule),
                message=MESSAGES.get(str(rule), str(rule)),
                external_id=str(frame.at[row, "externalId"]) if "externalId" in frame else "",
                value=str(frame.at[row, column])[:80],
            ),
        )
    order = {c: i for i, c in enumerate(frame.columns)}
    return sorted(problems.values(), key=lambda p: (p.row, order.get(p.column, 99), p.rule))
