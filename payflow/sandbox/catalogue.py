"""Fixed reference data of the sandbox merchant: payout services and the SBP banks list."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

MOBILE_MONEY_CURRENCIES = ("XOF", "CDF", "GHS", "KES", "NGN", "ZAR", "UGX", "TZS", "ZMW", "BDT")
WHOLE_AMOUNT_CURRENCIES = frozenset({"XOF", "TZS", "KES", "GHS", "UGX"})
NO_BANKS_SUFFIX = "0000"


@dataclass(frozen=True)
class PayoutService:
    """One record of GET /v1/payouts/services; the first per (type, currency) is the default."""

    id: int
    name: str
    payment_type: str
    currency: str

    def as_json(self) -> dict[str, Any]:
        """The record as the API shows it."""
        return {
            "id": self.id,
            "name": self.name,
            "paymentType": self.payment_type,
            "currency": self.currency,
        }


SERVICES: tuple[PayoutService, ...] = (
    PayoutService(101, "SBP transfer by phone number", "SBP", "RUB"),
    PayoutService(102, "Ruble bank account of an individual", "BANK_ACCOUNT", "RUB"),
    PayoutService(201, "Mobile money XOF (Orange Money)", "SIM", "XOF"),
    PayoutService(202, "Mobile money XOF (MTN MoMo)", "SIM", "XOF"),
    *(
        PayoutService(203 + n, f"Mobile money {currency}", "SIM", currency)
        for n, currency in enumerate(MOBILE_MONEY_CURRENCIES[1:])
    ),
    PayoutService(301, "E-mail wallet USD", "EMAIL", "USD"),
    PayoutService(302, "E-mail wallet EUR", "EMAIL", "EUR"),
)

SERVICES_BY_ID = {service.id: service for service in SERVICES}


def currencies_for(payment_type: str) -> list[str]:
    """Currencies the sandbox accepts for a payment type, in services-list order."""
    return list(dict.fromkeys(s.currency for s in SERVICES if s.payment_type == payment_type))


def payment_types() -> list[str]:
    """Every payment type the sandbox knows."""
    return list(dict.fromkeys(s.payment_type for s in SERVICES))


def default_service(payment_type: str, currency: str) -> PayoutService | None:
    """The merchant's default service for a type and currency, when one exists."""
    for service in SERVICES:
        if service.payment_type == payment_type and service.currency == currency:
            return service
    return None


@cache
def all_banks() -> tuple[tuple[str, str], ...]:
    """(id, name) of every SBP bank in `data/banks.json`."""
    text = resources.files("payflow.sandbox").joinpath("data/banks.json").read_text("utf-8")
    return tuple((str(bank["id"]), str(bank["name"])) for bank in json.loads(text))


def banks_for_phone(phone: str) -> list[dict[str, str]]:
    """The banks list for a phone: the whole catalogue, or none for phones ending in `0000`."""
    if phone.endswith(NO_BANKS_SUFFIX):
        return []
    return [{"id": bank_id, "name": name} for bank_id, name in all_banks()]
