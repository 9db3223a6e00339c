"""Each problem names its own cause: externalIds the API cannot take, disabled pairs, amounts,
bank names that match nothing (issue 7, items 4, 10 and 11)."""

from __future__ import annotations

import pytest
from schema_rows import BANKS, SERVICES, row, rules_of, validate

from payflow.intake.lookups import BankInfo, ServiceInfo


@pytest.mark.parametrize(
    ("external_id", "rule"),
    [
        (" ", "external_id_spaces"),
        (" a-1", "external_id_spaces"),
        ("a-1 ", "external_id_spaces"),
        (".", "external_id_dot_segment"),
        ("..", "external_id_dot_segment"),
        ("a/1", "external_id_characters"),
        ("a 1", "external_id_characters"),
        ("a%2F", "external_id_characters"),
        ("a?b", "external_id_characters"),
        ("a#b", "external_id_characters"),
        ("счёт-1", "external_id_characters"),
        ("a\x0bb", "no_control_characters"),
        ("x" * 256, "external_id_length"),
    ],
)
def test_an_external_id_the_api_cannot_take_is_rejected_by_its_own_rule(
    external_id: str, rule: str
) -> None:
    report = validate(row("SIM", externalId=external_id))
    assert rules_of(report) == {rule}
    assert report.instructions == []


@pytest.mark.parametrize(
    ("user_id", "rule"),
    [
        ("u-1 ", "user_id_spaces"),
        ("\u00a0u-1", "user_id_spaces"),
        ("\tu-1", "no_control_characters"),
        (" ", "user_id_present"),
    ],
)
def test_a_user_id_with_a_space_at_an_edge_is_rejected_not_sent(user_id: str, rule: str) -> None:
    # Found by hand: "u-1 " was sent as written, another user than "u-1" to the service.
    report = validate(row("SIM", userId=user_id))
    assert rules_of(report) == {rule}
    assert report.instructions == []


@pytest.mark.parametrize("external_id", ["inv-2024.001", "A_b~c:1@x", "x" * 255, "a..b"])
def test_external_ids_that_survive_a_url_path_pass(external_id: str) -> None:
    assert validate(row("SIM", externalId=external_id)).rejects == []


def test_a_pair_no_enabled_service_pays_is_rejected_at_validation() -> None:
    report = validate(row("EMAIL", currency="RUB"), row("EMAIL", currency="USD"))
    (problem,) = report.rejects
    assert (problem.row, problem.column, problem.rule) == (2, "currency", "service_not_enabled")
    assert "EMAIL in RUB" in problem.message and "EUR, USD" in problem.message
    assert [i.currency for i in report.instructions] == ["USD"]


def test_pairs_are_not_checked_without_a_services_list() -> None:
    report = validate(row("EMAIL", currency="RUB"), services=None)
    assert report.rejects == []
    assert any("pairs not checked" in note for note in report.not_checked)
    silent = validate(row("EMAIL", currency="RUB"), services=[ServiceInfo(1)])
    assert any("silent" in note for note in silent.not_checked)


@pytest.mark.parametrize(
    ("amount", "rule", "words"),
    [
        ("-500", "amount_positive", "must be positive"),
        ("0", "amount_positive", "must be positive"),
        ("1500.0000000002", "amount_decimals", "rounding artefact"),
        ("1 500", "amount_format", "no spaces"),
        ("1,5", "amount_format", "commas"),
        ("1e3", "amount_format", "exponents"),
    ],
)
def test_each_amount_problem_names_its_own_cause(amount: str, rule: str, words: str) -> None:
    report = validate(row("SIM", amount=amount))
    (problem,) = report.rejects
    assert problem.rule == rule and words in problem.message


def test_a_bank_name_that_matches_nothing_suggests_close_names() -> None:
    banks = [*BANKS, BankInfo("100000000005", "Банк ВТБ"), BankInfo("1000000007", "Альфа-Банк")]
    report = validate(
        row("SBP", bankName="ВТБ"),
        row("SBP", bankName="Сбербнак"),
        row("SBP", bankName="Nothing Like It"),
        banks_for_phones=lambda phones: {p: banks for p in phones},
    )
    messages = {p.row: p.message for p in report.rejects}
    assert "did you mean 'Банк ВТБ'?" in messages[2]
    assert "did you mean 'Сбербанк'?" in messages[3]
    assert "did you mean" not in messages[4]


def test_an_unknown_bank_with_nothing_close_lists_the_banks_that_serve_the_phone() -> None:
    # Found by use: "Bank of Nowhere" got "no bank for this phone has the id or name" and no
    # list to choose from, though the banks list was asked for that very phone.
    many = [BankInfo(f"10000000{n:04d}", f"Банк {n}") for n in range(10)]
    report = validate(
        row("SBP", bankName="Bank of Nowhere"),
        banks_for_phones=lambda phones: {p: many for p in phones},
    )
    (problem,) = report.rejects
    assert problem.rule == "sbp_bank_not_found"
    assert problem.message.endswith(
        "; the banks that serve this phone: 'Банк 0', 'Банк 1', 'Банк 2', 'Банк 3', 'Банк 4', "
        "'Банк 5', 'Банк 6', 'Банк 7' and 2 more"
    )


def test_close_bank_names_prefers_names_containing_the_given_text() -> None:
    from payflow.schemas.lookups import close_bank_names

    names = ["Банк ВТБ", "ВТБ Капитал", "Сбербанк", "Т-Банк"]
    assert close_bank_names("втб", names) == ["Банк ВТБ", "ВТБ Капитал"]
    assert close_bank_names("", names) == []


def test_services_list_in_the_shared_rows_covers_every_destination_row() -> None:
    # The rule tests above rely on it: the usual rows must not be refused for their pair.
    pairs = {(s.payment_type, s.currency) for s in SERVICES}
    assert {("SIM", "XOF"), ("SBP", "RUB"), ("BANK_ACCOUNT", "RUB"), ("EMAIL", "USD")} <= pairs
