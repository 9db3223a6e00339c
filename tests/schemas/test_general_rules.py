"""Each general rule rejects what it should, on the right row and column, and nothing more."""

from __future__ import annotations

import pytest
from schema_rows import row, validate


def test_a_valid_row_of_each_destination_passes() -> None:
    report = validate(row("SIM"), row("SBP"), row("BANK_ACCOUNT"), row("EMAIL"))
    assert report.rejects == []
    assert [i.payment_type for i in report.instructions] == ["SIM", "SBP", "BANK_ACCOUNT", "EMAIL"]


def test_the_valid_count_needs_no_instructions_and_they_are_built_once_on_first_use() -> None:
    # `payflow validate` prints the count and never sends a row: building a million
    # instructions it does not use was a sixth of its time.
    report = validate(row("SIM"), row("SBP", amount="not a number"), row("BANK_ACCOUNT"))
    assert report.valid == 2
    assert "instructions" not in vars(report)
    assert [(i.row_number, i.payment_type) for i in report.instructions] == [
        (2, "SIM"),
        (4, "BANK_ACCOUNT"),
    ]
    assert report.instructions is report.instructions


@pytest.mark.parametrize(
    ("cells", "rule", "column"),
    [
        ({"amount": ""}, "amount_present", "amount"),
        ({"amount": "1,5"}, "amount_format", "amount"),
        ({"amount": "15.005"}, "amount_decimals", "amount"),
        ({"amount": "0.30000000000000004"}, "amount_decimals", "amount"),
        ({"amount": "-5"}, "amount_positive", "amount"),
        ({"amount": "1e3"}, "amount_format", "amount"),
        ({"amount": "0.00"}, "amount_positive", "amount"),
        ({"currency": "xof"}, "currency_iso4217", "currency"),
        ({"currency": "ABC"}, "currency_iso4217", "currency"),
        ({"paymentType": "CARD"}, "payment_type_known", "paymentType"),
        ({"name": "  "}, "name_present", "name"),
        ({"userId": ""}, "user_id_present", "userId"),
        ({"userId": "u" * 256}, "user_id_length", "userId"),
        ({"externalId": "x" * 256}, "external_id_length", "externalId"),
        ({"userEmail": "no-at-sign"}, "user_email_format", "userEmail"),
        ({"userIp": "999.1.1.1"}, "user_ip_format", "userIp"),
        ({"callbackUrl": "javascript:alert(1)"}, "callback_url_format", "callbackUrl"),
        ({"serviceId": "20I"}, "service_id_integer", "serviceId"),
        ({"name": "tab\there"}, "no_control_characters", "name"),
        ({"note": "line\u2028separator"}, "no_control_characters", "note"),
        ({"userId": "nul\x00"}, "no_control_characters", "userId"),
    ],
)
def test_general_rule(cells: dict[str, str], rule: str, column: str) -> None:
    report = validate(row("SIM", **cells))
    assert {(p.row, p.column, p.rule) for p in report.rejects} == {(2, column, rule)}
    assert report.instructions == []
    assert report.rejects[0].message


def test_good_optional_values_pass() -> None:
    report = validate(
        row(
            "SIM",
            userEmail="a.b+c@mail.example.org",
            userIp="2001:db8::1",
            callbackUrl="https://hooks.example.com/payflow?x=1",
            serviceId="201",
            amount="15000.00",
        )
    )
    assert report.rejects == []


def test_every_row_that_shares_an_external_id_is_rejected() -> None:
    rows = [
        row("SIM", externalId="same"),
        row("SIM", externalId="other"),
        row("SIM", externalId="same"),
    ]
    report = validate(*rows)
    assert {p.row for p in report.rejects if p.rule == "external_id_unique"} == {2, 4}
    assert [i.external_id for i in report.instructions] == ["other"]


def test_missing_external_ids_are_derived_from_the_row_itself() -> None:
    first = validate(row("SIM", externalId=""), row("SIM", externalId="given"))
    again = validate(row("SIM", externalId=""), row("SIM", externalId="given"))
    ids = [i.external_id for i in first.instructions]
    assert ids[0].startswith("pf-") and ids[0].endswith("-1") and ids[1] == "given"
    assert first.batch_id[:12] not in ids[0]
    assert ids == [i.external_id for i in again.instructions]


def test_amounts_are_exact_decimals() -> None:
    report = validate(row("SBP", amount="0.10"), row("SBP", amount="99999999.99", userId="u2"))
    assert [str(i.amount) for i in report.instructions] == ["0.10", "99999999.99"]


def test_problems_name_row_column_rule_and_mask_requisites() -> None:
    report = validate(row("SIM"), row("SIM", requisites="+2250700009876"))
    (problem,) = report.rejects
    assert (problem.row, problem.column, problem.external_id) == (3, "requisites", "e-3")
    # The `+` that caused the reject stays visible; letters and digits are masked (issue 36).
    assert problem.value == "+*********9876"
    assert report.rejected_rows() == {3: [f"requisites: {problem.message} ({problem.rule})"]}


def test_repeated_amounts_are_judged_row_by_row() -> None:
    # Amounts are parsed once per distinct text: each row must still get its own verdict.
    amounts = ["100.50", "1,5", "100.50", "7", "1,5", "100.5"]
    report = validate(*[row("SBP", amount=a, userId=f"u{n}") for n, a in enumerate(amounts)])
    assert {(p.row, p.rule) for p in report.rejects} == {(3, "amount_format"), (6, "amount_format")}
    assert [(i.row_number, str(i.amount)) for i in report.instructions] == [
        (2, "100.50"),
        (4, "100.50"),
        (5, "7"),
        (7, "100.5"),
    ]


def test_a_cell_at_its_length_limit_passes() -> None:
    report = validate(row("SIM", externalId="x" * 255, userId="u" * 255))
    assert report.rejects == []
