"""Rules that depend on the destination, all read from the rules table."""

from __future__ import annotations

from pathlib import Path

import pytest
from schema_rows import ACCOUNT, BIK, SERVICES, row, rules_of, validate

from payflow.defaults import DESTINATION_RULES, default_file
from payflow.intake.lookups import ServiceInfo
from payflow.schemas.requisites import account_with_key
from payflow.schemas.rules import RulesTableError, load_rules


@pytest.mark.parametrize(
    ("payment_type", "cells", "rule"),
    [
        ("SIM", {"currency": "RUB"}, "currency_for_destination"),
        ("SBP", {"currency": "XOF", "amount": "1500"}, "currency_for_destination"),
        ("BANK_ACCOUNT", {"currency": "USD"}, "currency_for_destination"),
        ("SIM", {"requisites": "+2250700001234"}, "requisites_intl_wallet_phone"),
        ("SIM", {"requisites": "225 0700 001234"}, "requisites_intl_wallet_phone"),
        ("SIM", {"requisites": "22507"}, "requisites_intl_wallet_phone"),
        ("SIM", {"requisites": "2250700001234567"}, "requisites_intl_wallet_phone"),
        ("SIM", {"currency": "KES", "requisites": "2250700001234"}, "wallet_country_code"),
        ("SIM", {"amount": "1502"}, "amount_step"),
        ("SIM", {"amount": "1500.50"}, "amount_step"),
        ("SIM", {"currency": "KES", "requisites": "254712345678", "amount": "99.5"}, "amount_step"),
        ("SIM", {"currency": "TZS", "requisites": "255712345678", "amount": "0.01"}, "amount_step"),
        ("SBP", {"requisites": "+79161234567"}, "requisites_ru_mobile_phone"),
        ("SBP", {"requisites": "8 916 123 45 67"}, "requisites_ru_mobile_phone"),
        ("SBP", {"requisites": "74951234567"}, "requisites_ru_mobile_phone"),
        ("SBP", {"bankName": ""}, "bank_name_required"),
        (
            "BANK_ACCOUNT",
            {"requisites": "40702810099910004312"},
            "requisites_ru_individual_account",
        ),
        ("BANK_ACCOUNT", {"requisites": ACCOUNT[:-1]}, "requisites_ru_individual_account"),
        ("BANK_ACCOUNT", {"requisites": ACCOUNT[:8] + "9" + ACCOUNT[9:]}, "account_check_key"),
        ("BANK_ACCOUNT", {"bik": "044525226"}, "account_check_key"),
        # Found by hand: a bik that LibreOffice read as a number said only "9 digits starting 04".
        ("BANK_ACCOUNT", {"bik": "44525225"}, "bik_leading_zero_lost"),
        ("BANK_ACCOUNT", {"bik": "4452522"}, "bik_format"),
        ("BANK_ACCOUNT", {"bik": "144525225"}, "bik_format"),
        ("EMAIL", {"requisites": "who@"}, "requisites_email_address"),
    ],
)
def test_destination_rule(payment_type: str, cells: dict[str, str], rule: str) -> None:
    report = validate(row(payment_type, **cells))
    assert rules_of(report) == {rule}
    assert report.instructions == []


@pytest.mark.parametrize(
    ("payment_type", "cells"),
    [
        ("SIM", {"currency": "KES", "requisites": "254712345678", "amount": "100"}),
        ("SIM", {"currency": "NGN", "requisites": "2348012345678", "amount": "100.50"}),
        ("SIM", {"currency": "BDT", "requisites": "8801712345678", "amount": "0.01"}),
        ("SIM", {"amount": "5"}),
        ("SBP", {"requisites": "9161234567"}),
        ("SBP", {"requisites": "89161234567"}),
        ("BANK_ACCOUNT", {"bik": ""}),
        ("BANK_ACCOUNT", {"requisites": account_with_key(BIK, "40820810000000000001")}),
        ("EMAIL", {"currency": "EUR"}),
    ],
)
def test_destination_accepts(payment_type: str, cells: dict[str, str]) -> None:
    report = validate(row(payment_type, **cells))
    assert report.rejects == []
    assert report.instructions[0].requisites == row(payment_type, **cells)["requisites"]


def _table(tmp_path: Path, extra: str) -> Path:
    shipped = default_file(DESTINATION_RULES).read_text("utf-8")
    path = tmp_path / "rules.csv"
    path.write_text(shipped + extra, "utf-8")
    return path


def test_limits_per_destination_currency_and_service(tmp_path: Path) -> None:
    table = load_rules(
        _table(
            tmp_path,
            "SIM,XOF,,,,,100,,,,XOF floor\nSIM,XOF,201,,,,,10000,,,service 201 ceiling\n"
            "EMAIL,*,,,,,,50,,,any currency\n",
        )
    )
    report = validate(
        row("SIM", amount="95"),
        row("SIM", amount="20000", serviceId="201"),
        row("SIM", amount="20000"),
        row("EMAIL", amount="50.01"),
        row("EMAIL", amount="50"),
        table=table,
    )
    assert [(p.row, p.rule) for p in report.rejects] == [
        (2, "amount_minimum"),
        (3, "amount_maximum"),
        (5, "amount_maximum"),
    ]


def test_a_new_destination_is_a_row_of_the_table(tmp_path: Path) -> None:
    table = load_rules(_table(tmp_path, "EMAIL_BRL,BRL,,email_address,,0.01,,,no,yes,new\n"))
    good = row("EMAIL", paymentType="EMAIL_BRL", currency="BRL")
    bad = row("EMAIL", paymentType="EMAIL_BRL", currency="USD")
    services = [*SERVICES, ServiceInfo(401, "EMAIL_BRL", "BRL")]
    report = validate(good, bad, table=table, services=services)
    assert [(p.row, p.rule) for p in report.rejects] == [(3, "currency_for_destination")]
    assert rules_of(validate(good)) == {"payment_type_known"}


def test_a_table_naming_an_unknown_requisites_rule_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RulesTableError, match="unknown requisites rule 'pix_key'"):
        load_rules(_table(tmp_path, "PIX,BRL,,pix_key,,0.01,,,no,yes,\n"))


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ({"amount": "1502"}, "XOF amounts must be a whole multiple of 5"),
        (
            {"currency": "KES", "requisites": "254712345678", "amount": "99.5"},
            "KES amounts must be whole numbers",
        ),
        (
            {"currency": "KES", "requisites": "2250700001234"},
            "a KES wallet number must start with one of its country codes: 254",
        ),
    ],
)
def test_destination_messages_name_the_rows_own_rule(cells: dict[str, str], message: str) -> None:
    report = validate(row("SIM", **cells))
    assert [p.message for p in report.rejects] == [message]


def test_an_amount_with_cents_in_a_currency_without_them_is_a_reject() -> None:
    # Found by hand: EMAIL pays any currency in steps of 0.01, so 1000.5 JPY was valid, and the
    # report (JPY with no decimals) showed it as 1,001.
    services = [*SERVICES, ServiceInfo(303, "EMAIL", "JPY")]
    report = validate(
        row("EMAIL", currency="JPY", amount="1000.5"),
        row("EMAIL", currency="JPY", amount="1000", externalId="e-3"),
        row("EMAIL", currency="USD", amount="1000.5", externalId="e-4"),
        row("SIM", amount="1000.5", externalId="e-5"),  # XOF's own step says it, once
        services=services,
    )
    assert [(p.row, p.rule, p.message) for p in report.rejects] == [
        (2, "amount_currency_decimals", "JPY amounts must be whole numbers: JPY has no minor unit"),
        (5, "amount_step", "XOF amounts must be a whole multiple of 5"),
    ]
    assert [i.external_id for i in report.instructions] == ["e-3", "e-4"]
