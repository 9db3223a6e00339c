"""A recipient's canonical form, one function per destination (issue 36, item 1; invariant 11)."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from payflow.intake.identity import canonical_column
from payflow.schemas.recipients import (
    ALREADY_CANONICAL,
    CANONICAL,
    CANONICAL_FORMS,
    canonical_requisites,
)
from payflow.schemas.requisites import ACCEPTED_IS_CANONICAL, REQUISITES_RULES


@pytest.mark.parametrize(
    ("payment_type", "written", "canonical"),
    [
        ("SBP", "79351230001", "79351230001"),
        ("SBP", "89351230001", "79351230001"),
        ("SBP", "9351230001", "79351230001"),
        ("sbp", " 89351230008 ", "79351230008"),
        ("SBP", "+7 (935) 123-00-01", "79351230001"),  # rejected by validation; one person still
        ("SBP", "69351230001", "69351230001"),  # no Russian mobile: as written
        ("SIM", "225 0700 001234", "2250700001234"),
        ("BANK_ACCOUNT", "40817-810-0999-1000-4312", "40817810099910004312"),
        ("EMAIL", "Who@Example.COM", "Who@example.com"),
        ("EMAIL", "not-an-address", "not-an-address"),
        ("CARD", " 4111 ", "4111"),  # no such destination: trimmed only
    ],
)
def test_each_destination_has_one_canonical_form(
    payment_type: str, written: str, canonical: str
) -> None:
    assert canonical_requisites(payment_type, written) == canonical


def test_every_destination_with_a_form_documents_it() -> None:
    assert set(CANONICAL) == set(CANONICAL_FORMS)


def test_the_column_form_agrees_with_the_function_row_by_row() -> None:
    cases = [
        ("SBP", "79351230001"), ("SBP", "89351230001"), ("SBP", "9351230001"),
        ("SBP", "8 935 123 00 01"), ("SIM", "2250700001234"), ("SIM", "+2250700001234"),
        ("BANK_ACCOUNT", "40817810099910004312"), ("EMAIL", "a@B.org"), ("", "x"), ("SBP", ""),
    ]  # fmt: skip
    kinds = pd.Series([k for k, _ in cases], index=range(2, 2 + len(cases)))
    written = pd.Series([w for _, w in cases], index=kinds.index)
    expected = [canonical_requisites(k, w) for k, w in cases]
    assert canonical_column(kinds, written).tolist() == expected


@pytest.mark.parametrize("payment_type", sorted(ALREADY_CANONICAL))
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_text_taken_as_already_canonical_is_its_own_canonical_form(
    payment_type: str, data: st.DataObject
) -> None:
    # canonical_column skips the function for text matching ALREADY_CANONICAL: only right if
    # the function would have returned that text unchanged.
    text = data.draw(st.from_regex(ALREADY_CANONICAL[payment_type], fullmatch=True))
    assert canonical_requisites(payment_type, text) == text


@pytest.mark.parametrize(("rule", "payment_type"), sorted(ACCEPTED_IS_CANONICAL))
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_text_a_rule_accepts_is_its_own_canonical_form(
    rule: str, payment_type: str, data: st.DataObject
) -> None:
    # The double-payment warning takes such a row's requisites as written: only right if the
    # canonical form of anything the rule accepts is that text itself.
    text = data.draw(st.from_regex(REQUISITES_RULES[rule].pattern, fullmatch=True))
    assert canonical_requisites(payment_type, text) == text == text.strip()


# Wallet phones, accounts and SBP phones as written: accepted ones, and some only one canonical
# form away from an accepted one (separators, a leading 8), so twins differ as written.
RECIPIENTS = {
    "SIM": ["2250700001234", "225 0700001234", "+2250700001234", "2250700001235"],
    "BANK_ACCOUNT": ["40817810099910004312", "40817-810-099910004312", "40820810000000000001"],
    "SBP": ["79161234567", "89161234567", "9161234567", "+79161234567"],
}
CURRENCY = {"SIM": "XOF", "BANK_ACCOUNT": "RUB", "SBP": "RUB"}
PAYOUT = st.sampled_from(sorted(RECIPIENTS)).flatmap(
    lambda kind: st.tuples(
        st.just(kind),
        st.sampled_from(RECIPIENTS[kind]),
        st.sampled_from(["1500", "2000"]),
    )
)


@settings(max_examples=200, deadline=None)
@given(st.lists(PAYOUT, min_size=1, max_size=10))
def test_the_warnings_of_valid_rows_taken_as_written_are_those_of_their_canonical_forms(
    rows: list[tuple[str, str, str]],
) -> None:
    from payflow.intake import batch_from_rows
    from payflow.schemas.batch_schema import find_problems
    from payflow.schemas.batch_warnings import _accepted_canonical, _double_payments
    from payflow.schemas.rules import load_rules

    header = ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"]
    # A bank id on every row: an SBP row needs one to be valid.
    lines = [
        [f"x-{n}", a, CURRENCY[k], k, r, "Awa", "u-1", "100000000111"]
        for n, (k, r, a) in enumerate(rows)
    ]
    header.append("bankName")
    table = load_rules()
    prepared, rejects = find_problems(batch_from_rows([header, *lines]).frame, table)
    valid = prepared.drop(index=list({p.row for p in rejects}))
    taken = _accepted_canonical(valid, table)
    assert _double_payments(valid, taken) == _double_payments(valid)


# Requisites of every shape the forms tell apart: digits of each length, separators, spaces at
# the edges, e-mail case, digits of other scripts, blanks.
REQUISITES = st.text(alphabet=st.sampled_from([*"0789", " ", "+", "-", "(", "@", "A", "a", "٣"]))
KINDS = st.sampled_from(["SBP", "sbp", " SIM", "BANK_ACCOUNT", "EMAIL", "CARD", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KINDS, REQUISITES | st.from_regex(r"[789]?9[0-9]{9}", fullmatch=True))))
def test_the_column_form_agrees_with_the_function_on_any_column(
    rows: list[tuple[str, str]],
) -> None:
    kinds = pd.Series([k for k, _ in rows], index=range(2, 2 + len(rows)), dtype=str)
    written = pd.Series([w for _, w in rows], index=kinds.index, dtype=str)
    expected = [canonical_requisites(k, w.strip()) for k, w in rows]
    assert canonical_column(kinds, written).tolist() == expected


def test_a_file_without_external_ids_is_not_told_of_another_external_id() -> None:
    # Issue 36, item 9: "with another externalId" for a file that has no externalId column.
    from payflow.intake import batch_from_rows
    from payflow.intake.lookups import ServiceInfo
    from payflow.tasks.validate_batch import validate_rows

    header = ["amount", "currency", "paymentType", "requisites", "name", "userId"]
    rows = [["1500", "XOF", "SIM", "2250700001234", "Awa", "u-1"]] * 2
    report = validate_rows(
        batch_from_rows([header, *rows]),
        services=[ServiceInfo(1, "SIM", "XOF")],
        banks_for_phones=None,
    )
    twins = [p.message for p in report.warnings if p.rule == "possible_double_payment"]
    assert twins == [
        "same recipient, amount and currency as row 3: a likely double payment",
        "same recipient, amount and currency as row 2: a likely double payment",
    ]


@pytest.mark.parametrize(
    ("payment_type", "written", "shown"),
    [
        ("SBP", "9351230001", "*******0001"),  # as 79351230001, the payout it is
        ("EMAIL", "Who@Example.COM", "***********.com"),
        ("SIM", "2250700001234", "*********1234"),
    ],
)
def test_the_report_names_the_recipient_in_canonical_form(
    payment_type: str, written: str, shown: str
) -> None:
    from types import SimpleNamespace

    from payflow.reporting.layout import ROW_COLUMNS

    (column,) = [c for c in ROW_COLUMNS if c.name == "requisites_masked"]
    line = SimpleNamespace(payment_type=payment_type, requisites=written)
    assert column.value(line, None) == shown  # type: ignore[arg-type]
