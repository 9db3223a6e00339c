"""A row breaking several rules is told all of them in one `payflow validate` (design.md: "all
problems at once"): no rule, look-up included, waits for another to be fixed first, unless the
cell it reads is itself the one rejected."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from schema_rows import SERVICES, banks_by_phone, row, validate

from payflow.intake import ValidationReport
from payflow.intake.lookups import BankInfo, ServiceInfo


def found(report: ValidationReport, row_number: int = 2) -> set[tuple[str, str]]:
    """(column, rule) of every reject of one row."""
    return {(p.column, p.rule) for p in report.rejects if p.row == row_number}


# One case per rule that used to wait for another to be fixed first.
CASES = {
    "bank name of a row rejected for its amount": (
        row("SBP", amount="-5", bankName="Нет Такого"),
        {("amount", "amount_positive"), ("bankName", "sbp_bank_not_found")},
    ),
    "phone without banks of a row rejected for its name": (
        row("SBP", name="", requisites="79160000000"),
        {("name", "name_present"), ("requisites", "sbp_no_bank_for_phone")},
    ),
    "serviceId of a row rejected for its amount": (
        row("SIM", amount="abc", serviceId="999"),
        {("amount", "amount_format"), ("serviceId", "service_unknown")},
    ),
    "service of another type on a row rejected for its userId": (
        row("SIM", userId="", serviceId="101"),
        {("userId", "user_id_present"), ("serviceId", "service_mismatch")},
    ),
    "pair no service pays on a row rejected for its name": (
        row("EMAIL", currency="GBP", name=""),
        {("name", "name_present"), ("currency", "service_not_enabled")},
    ),
    "requisites and bankName of SBP in USD": (
        row("SBP", currency="USD", requisites="12345", bankName=""),
        {
            ("currency", "currency_for_destination"),
            ("requisites", "requisites_ru_mobile_phone"),
            ("bankName", "bank_name_required"),
        },
    ),
    "account check key with a currency in lower case": (
        row("BANK_ACCOUNT", currency="rub", requisites="40817810000000000001"),
        {("currency", "currency_iso4217"), ("requisites", "account_check_key")},
    ),
    "bank name of SBP in USD": (
        row("SBP", currency="USD", bankName="Нет Такого"),
        {("currency", "currency_for_destination"), ("bankName", "sbp_bank_not_found")},
    ),
    # No destination, so no requisites pattern, step or bank rule means anything for it.
    "nothing more past an unknown paymentType": (
        row("SBP", paymentType="CARD", requisites="12345", bankName=""),
        {("paymentType", "payment_type_known")},
    ),
}


@pytest.mark.parametrize(("cells", "expected"), CASES.values(), ids=CASES.keys())
def test_every_problem_of_a_row_at_once(
    cells: dict[str, str], expected: set[tuple[str, str]]
) -> None:
    assert found(validate(cells)) == expected


def test_a_rejected_cell_is_not_looked_up_again() -> None:
    calls: list[list[str]] = []

    def recording(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
        calls.append(list(phones))
        return banks_by_phone(phones)

    report = validate(
        row("SBP", requisites="7916123", bankName="Нет Такого"),  # no phone: no banks list
        row("SBP", bankName="x" * 256),  # the name is rejected for its length already
        row("SIM", serviceId="abc", currency="XOF"),  # not a whole number: no service to find
        row("SIM", serviceId="101", currency="usd"),  # its own currency is the problem
        banks_for_phones=recording,
    )
    assert calls == []
    assert found(report, 2) == {("requisites", "requisites_ru_mobile_phone")}
    assert found(report, 3) == {("bankName", "bank_name_length")}
    assert found(report, 4) == {("serviceId", "service_id_integer")}
    assert found(report, 5) == {("currency", "currency_iso4217")}


def test_a_rejected_rows_bank_never_lands_on_a_row_paid() -> None:
    report = validate(
        row("SBP", bankName="т-банк", userId=" u"),  # resolved, then rejected for its userId
        row("SBP", userId="u2"),
    )
    assert found(report) == {("userId", "user_id_spaces")}
    paid = [(i.row_number, i.bank_name) for i in report.instructions]
    assert paid == [(3, row("SBP")["bankName"])]


def test_a_service_list_silent_on_pairs_judges_membership_only() -> None:
    silent = [ServiceInfo(s.id) for s in SERVICES]
    report = validate(row("SIM", amount="abc", serviceId="999"), services=silent)
    assert found(report) == {("amount", "amount_format"), ("serviceId", "service_unknown")}
