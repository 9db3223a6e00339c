"""The pandera schema of a batch, built from the destination rules table, and its findings.

Validation is lazy: every failing row, column and rule is collected in one pass and mapped back
to the spreadsheet row the operator sees (the frame's index is that row number).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from payflow.intake.problems import Problem, shown_value
from payflow.schemas.column_rules import column_rules, prepare
from payflow.schemas.destination_checks import destination_rules, row_message
from payflow.schemas.rules import RulesTable
from payflow.schemas.text_checks import no_control_characters

# Rules whose message names the row's own destination instead of every destination's rule.
ROW_SPECIFIC_RULES = frozenset({"amount_step", "amount_currency_decimals", "wallet_country_code"})

CONTROL_RULE = "no_control_characters"
CONTROL_MESSAGE = "contains a line break, tab or other control character"


@dataclass(frozen=True)
class BatchSchema:
    """A pandera schema and, per rule name, the column it reports on and the operator's message."""

    schema: pa.DataFrameSchema
    messages: dict[str, str]
    frame_rule_columns: dict[str, str]


def build_schema(table: RulesTable, columns: Collection[str]) -> BatchSchema:
    """The schema for a batch that carries `columns` (canonical names)."""
    messages = {CONTROL_RULE: CONTROL_MESSAGE}
    schema_columns: dict[str, pa.Column] = {}
    by_column = column_rules(table)
    for column in columns:
        # ignore_na=False: cells are never NA here, and pandera's dropna would copy each column.
        checks = [pa.Check(no_control_characters, name=CONTROL_RULE, ignore_na=False)]
        for rule, message, fn in by_column.get(column, []):
            checks.append(pa.Check(fn, name=rule, ignore_na=False))
            messages[rule] = message
        schema_columns[column] = pa.Column(None, checks=checks, nullable=True)
    frame_checks = []
    frame_rule_columns: dict[str, str] = {}
    for rule, column, message, frame_check in destination_rules(table):
        frame_checks.append(pa.Check(frame_check, name=rule, ignore_na=False))
        messages[rule] = message
        frame_rule_columns[rule] = column
    schema = pa.DataFrameSchema(schema_columns, checks=frame_checks, name="payout batch")
    return BatchSchema(schema, messages, frame_rule_columns)


def find_problems(frame: pd.DataFrame, table: RulesTable) -> tuple[pd.DataFrame, list[Problem]]:
    """The prepared frame (with `_cents`, `_dest`, `_kind`) and every rule it breaks, by row."""
    prepared = prepare(frame, table)
    batch_schema = build_schema(table, list(frame.columns))
    try:
        batch_schema.schema.validate(prepared, lazy=True, inplace=True)
    except SchemaErrors as errors:
        return prepared, _problems(errors.failure_cases, frame, batch_schema, table)
    return prepared, []


def _problems(
    cases: pd.DataFrame, frame: pd.DataFrame, schema: BatchSchema, table: RulesTable
) -> list[Problem]:
    external_ids = frame.get("externalId")
    seen: set[tuple[int, str, str]] = set()
    problems: list[Problem] = []
    for rule, column, index in zip(cases["check"], cases["column"], cases["index"], strict=True):
        if index is None or pd.isna(index):
            raise RuntimeError(f"schema check {rule} failed as a whole: {cases.to_dict()}")
        target = schema.frame_rule_columns.get(rule)
        if target is not None:
            column = target  # a dataframe check is reported once, on the column it is about
        row = int(index)
        key = (row, str(column), str(rule))
        if key in seen:
            continue
        seen.add(key)
        value = str(frame.at[row, column]) if column in frame else ""
        problems.append(
            Problem(
                row=row,
                column=str(column),
                rule=str(rule),
                message=_message(str(rule), row, frame, schema, table),
                external_id=str(external_ids.at[row]) if external_ids is not None else "",
                value=shown_value(str(column), value),
            )
        )
    order = {c: i for i, c in enumerate(frame.columns)}
    problems.sort(key=lambda p: (p.row, order.get(p.column, len(order))))
    return problems


def _message(
    rule: str, row: int, frame: pd.DataFrame, schema: BatchSchema, table: RulesTable
) -> str:
    if rule in ROW_SPECIFIC_RULES and {"paymentType", "currency"} <= set(frame.columns):
        own = row_message(
            rule, table, str(frame.at[row, "paymentType"]), str(frame.at[row, "currency"])
        )
        if own is not None:
            return own
    return schema.messages.get(rule, rule)
