"""Helpers for the rule tests: valid rows per destination, banks and services lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from payflow.intake import ValidationReport, batch_from_rows
from payflow.intake.lookups import BankInfo, ServiceInfo
from payflow.schemas.requisites import account_with_key
from payflow.schemas.validation import validate_rows

BIK = "044525225"
ACCOUNT = account_with_key(BIK, "40817810099910004312")
BANKS = [BankInfo("100000000111", "Сбербанк"), BankInfo("100000000004", "Т-Банк")]
MOBILE_MONEY = ("CDF", "GHS", "KES", "NGN", "ZAR", "UGX", "TZS", "ZMW", "BDT")
SERVICES = [
    ServiceInfo(101, "SBP", "RUB"),
    ServiceInfo(201, "SIM", "XOF"),
    *(ServiceInfo(203 + n, "SIM", currency) for n, currency in enumerate(MOBILE_MONEY)),
    ServiceInfo(102, "BANK_ACCOUNT", "RUB"),
    ServiceInfo(301, "EMAIL", "USD"),
    ServiceInfo(302, "EMAIL", "EUR"),
]
BASE = {
    "SIM": {"amount": "1500", "currency": "XOF", "requisites": "2250700001234"},
    "SBP": {
        "amount": "1500",
        "currency": "RUB",
        "requisites": "79161234567",
        "bankName": BANKS[0].id,
    },
    "BANK_ACCOUNT": {"amount": "1500", "currency": "RUB", "requisites": ACCOUNT, "bik": BIK},
    "EMAIL": {"amount": "10", "currency": "USD", "requisites": "who@example.com"},
}


def banks_by_phone(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
    """Every phone has both banks, except phones ending in 0000 (none)."""
    return {phone: ([] if phone.endswith("0000") else BANKS) for phone in phones}


def row(payment_type: str = "SIM", **cells: str) -> dict[str, str]:
    """A valid row of the destination with some cells overridden."""
    base = {"paymentType": payment_type, "name": "Recipient", "userId": "user-1"}
    return {**base, **BASE[payment_type], **cells}


def validate(*rows: dict[str, str], strict: bool = False, **kwargs: object) -> ValidationReport:
    """Validate rows (externalIds e-2, e-3... unless given) with banks and services known."""
    header = sorted({key for r in rows for key in r} | {"externalId"})
    body = [
        [r.get(h, f"e-{n + 2}" if h == "externalId" else "") for h in header]
        for n, r in enumerate(rows)
    ]
    options: dict[str, object] = {"services": SERVICES, "banks_for_phones": banks_by_phone}
    options.update(kwargs)
    return validate_rows(batch_from_rows([header, *body]), strict=strict, **options)  # type: ignore[arg-type]


def rules_of(report: ValidationReport, row_number: int = 2) -> set[str]:
    """Names of the rules a row broke."""
    return {p.rule for p in report.rejects if p.row == row_number}
