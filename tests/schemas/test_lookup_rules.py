"""SBP bank resolution by phone, serviceId membership, warnings and strict mode."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from schema_rows import BANKS, banks_by_phone, row, rules_of, validate

from payflow.intake.lookups import BankInfo


def test_bank_name_is_resolved_to_its_id_and_shown() -> None:
    report = validate(row("SBP", bankName="т-банк"), row("SBP", bankName=BANKS[0].id, userId="u2"))
    assert [i.bank_name for i in report.instructions] == [BANKS[1].id, BANKS[0].id]
    assert [(r.row, r.given, r.bank_id) for r in report.bank_resolutions] == [
        (2, "т-банк", BANKS[1].id)
    ]
    assert report.instructions[0].requisites == "79161234567"  # sent as given


def test_bank_problems() -> None:
    report = validate(
        row("SBP", bankName="Нет Такого"),
        row("SBP", requisites="79160000000"),
    )
    assert [(p.row, p.column, p.rule) for p in report.rejects] == [
        (2, "bankName", "sbp_bank_not_found"),
        (3, "requisites", "sbp_no_bank_for_phone"),
    ]


def test_a_name_shared_by_two_banks_is_ambiguous() -> None:
    def twins(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
        return {p: [BankInfo("1", "Bank"), BankInfo("2", "BANK")] for p in phones}

    assert rules_of(validate(row("SBP", bankName="bank"), banks_for_phones=twins)) == {
        "sbp_bank_ambiguous"
    }


def test_each_phone_is_looked_up_once_and_only_where_phone_and_bank_broke_no_rule() -> None:
    calls: list[list[str]] = []

    def recording(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
        calls.append(list(phones))
        return banks_by_phone(phones)

    validate(
        row("SBP"),
        row("SBP", userId="u2"),
        row("SBP", requisites="79031112233"),
        row("SBP", requisites="79035556677", amount="-1"),  # its amount stops no look-up
        row("SBP", requisites="7903555667", bankName=""),  # no phone, no bank to look up
        banks_for_phones=recording,
    )
    assert calls == [["79161234567", "79031112233", "79035556677"]]  # in file order


def test_without_a_banks_list_sbp_rows_cannot_be_checked() -> None:
    report = validate(row("SBP"), row("SIM"), banks_for_phones=None)
    assert [(p.row, p.rule) for p in report.rejects] == [(2, "sbp_bank_unchecked")]
    assert len(report.instructions) == 1


def test_service_id_must_be_a_listed_service_of_the_type_and_currency() -> None:
    report = validate(
        row("SIM", serviceId="201"),
        row("SIM", serviceId="999"),
        row("SIM", serviceId="205"),
        row("SIM", serviceId="101"),
    )
    assert [(p.row, p.rule) for p in report.rejects] == [
        (3, "service_unknown"),
        (4, "service_mismatch"),
        (5, "service_mismatch"),
    ]
    assert report.instructions[0].service_id == 201


def test_without_a_services_list_service_ids_are_reported_unchecked() -> None:
    report = validate(row("SIM", serviceId="999"), services=None)
    assert report.rejects == []
    assert report.not_checked and "not checked" in report.not_checked[0]


def test_double_payment_and_outlier_warnings_do_not_block() -> None:
    rows = [row("SIM", amount=str(1000 + 5 * n), userId=f"u{n}") for n in range(10)]
    rows += [row("SIM", amount="1000", userId="again"), row("SIM", amount="500000", userId="big")]
    report = validate(*rows)
    assert report.rejects == []
    assert [(p.row, p.rule) for p in report.warnings] == [
        (2, "possible_double_payment"),
        (12, "possible_double_payment"),
        (13, "amount_outlier"),
    ]
    assert "row 12" in report.warnings[0].message
    assert len(report.instructions) == 12


def test_strict_turns_warnings_into_rejects() -> None:
    rows = [row("SIM"), row("SIM", userId="again")]
    report = validate(*rows, strict=True)
    assert [(p.row, p.rule) for p in report.rejects] == [
        (2, "possible_double_payment"),
        (3, "possible_double_payment"),
    ]
    assert report.instructions == [] and report.warnings == []


def test_same_external_id_twice_is_a_reject_not_a_double_payment_warning() -> None:
    report = validate(row("SIM", externalId="x"), row("SIM", externalId="x"))
    assert {p.rule for p in report.rejects} == {"external_id_unique"}
    assert report.warnings == []
