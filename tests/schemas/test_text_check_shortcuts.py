"""The column checks decide a clean column in one scan; each must still agree with its rule
applied cell by cell, on any column, clean or not."""

from __future__ import annotations

import re

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from payflow.redact import CONTROL_PATTERN
from payflow.schemas.column_rules import (
    EXTERNAL_ID_CHARACTERS,
    TEMPLATE_EXAMPLE_PREFIX,
    column_rules,
)
from payflow.schemas.rules import load_rules
from payflow.schemas.text_checks import blank, no_control_characters, no_edge_spaces, unique

# Id-like text, with the characters the shortcuts must notice mixed in.
CELL = st.text(
    alphabet=st.sampled_from(
        [*"ab1-_.~", " ", "\t", "\n", "\u00a0", "\u2003", "\u2028", "\x85", "/", "%", "é"]
    ),
    max_size=6,
)
COLUMN = st.lists(CELL, max_size=12)


def column(values: list[str]) -> pd.Series:
    return pd.Series(values, index=range(2, 2 + len(values)), dtype=str)


@settings(max_examples=300, deadline=None)
@given(COLUMN)
def test_no_edge_spaces(values: list[str]) -> None:
    assert no_edge_spaces(column(values)).tolist() == [v == v.strip() for v in values]


@settings(max_examples=300, deadline=None)
@given(COLUMN)
def test_blank(values: list[str]) -> None:
    assert blank(column(values)).tolist() == [not v.strip() for v in values]


@settings(max_examples=300, deadline=None)
@given(COLUMN)
def test_unique(values: list[str]) -> None:
    assert unique(column(values)).tolist() == [values.count(v) == 1 for v in values]


@settings(max_examples=300, deadline=None)
@given(COLUMN)
def test_no_control_characters(values: list[str]) -> None:
    expected = [re.search(CONTROL_PATTERN, v) is None for v in values]
    assert no_control_characters(column(values)).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(COLUMN)
def test_external_id_characters(values: list[str]) -> None:
    check = next(
        fn for rule, _, fn in column_rules(load_rules())["externalId"]
        if rule == "external_id_characters"
    )  # fmt: skip
    # A cell with an edge space or a control character is left to those rules.
    expected = [
        v == ""
        or re.fullmatch(EXTERNAL_ID_CHARACTERS, v) is not None
        or v != v.strip()
        or re.search(CONTROL_PATTERN, v) is not None
        for v in values
    ]
    assert check(column(values)).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["example-", "example-1", "x\nexample-2", "1", "", "\n"]) | CELL))
def test_not_template_example(values: list[str]) -> None:
    check = next(
        fn for rule, _, fn in column_rules(load_rules())["externalId"]
        if rule == "template_example"
    )  # fmt: skip
    expected = [not v.startswith(TEMPLATE_EXAMPLE_PREFIX) for v in values]
    assert check(column(values)).tolist() == expected


def _rule(column_name: str, name: str):  # type: ignore[no-untyped-def]
    return next(fn for rule, _, fn in column_rules(load_rules())[column_name] if rule == name)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([".", "..", "...", "a.", "\n.", ".\n", ""]) | CELL))
def test_not_dot_segment(values: list[str]) -> None:
    check = _rule("externalId", "external_id_dot_segment")
    assert check(column(values)).tolist() == [v not in (".", "..") for v in values]


@settings(max_examples=300, deadline=None)
@given(COLUMN)
def test_user_id_spaces(values: list[str]) -> None:
    check = _rule("userId", "user_id_spaces")
    expected = [
        v == v.strip() or not v.strip() or re.search(CONTROL_PATTERN, v) is not None for v in values
    ]
    assert check(column(values)).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["044525225", "44525225", "04452522", "4452522x", "", " "])))
def test_bik_format(values: list[str]) -> None:
    check = _rule("bik", "bik_format")
    expected = [
        v == "" or re.fullmatch("04[0-9]{7}", v) is not None or re.fullmatch("4[0-9]{7}", v)
        for v in values
    ]
    assert check(column(values)).tolist() == [bool(e) for e in expected]
