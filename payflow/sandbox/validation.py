"""Reading request bodies and enforcing the spec's payout rules; every break is a 400."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from payflow.sandbox import catalogue
from payflow.sandbox.errors import bad_request

MAX_EXTERNAL_ID = 255
BANK_ACCOUNT_DIGITS = 20


def parse_json_object(body: bytes) -> dict[str, Any]:
    """The body as a JSON object, numbers with a point as Decimal (never float)."""
    try:
        data = json.loads(body, parse_float=Decimal, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError):
        raise bad_request("body is not valid JSON") from None
    if not isinstance(data, dict):
        raise bad_request("body must be a JSON object")
    return data


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def parse_amount(value: object, field: str = "amount") -> Decimal:
    """A positive amount with at most two decimals, given as a JSON number or a string."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal | str):
        raise bad_request(f"{field} is required and must be a number or a decimal string")
    try:
        amount = Decimal(value.strip() if isinstance(value, str) else value)
    except InvalidOperation:
        raise bad_request(f"{field} is not a decimal number: {str(value)[:40]!r}") from None
    if not amount.is_finite() or amount <= 0:
        raise bad_request(f"{field} must be a positive number")
    if amount.normalize().as_tuple().exponent < -2:  # type: ignore[operator]
        raise bad_request(f"{field} has more than 2 digits after the point")
    return amount


def format_amount(amount: Decimal) -> str:
    """Amounts are shown as strings with two decimals: `100` -> `"100.00"`."""
    return str(amount.quantize(Decimal("0.01")))


def optional_string(data: dict[str, Any], key: str, *, max_length: int | None = None) -> str | None:
    """A string field that may be absent or null."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_request(f"{key} must be a string")
    if max_length is not None and len(value) > max_length:
        raise bad_request(f"{key} must be at most {max_length} characters")
    return value


def required_string(data: dict[str, Any], key: str, prefix: str = "") -> str:
    """A non-empty string field."""
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise bad_request(f"{prefix}{key} is required and must be a non-empty string")
    return value


@dataclass(frozen=True)
class PayoutDraft:
    """A payout request that passed every rule."""

    amount: Decimal
    currency: str
    payment_type: str
    account: dict[str, Any]
    service_id: int
    external_id: str | None
    callback_url: str | None
    note: str | None


def validate_payout_request(data: dict[str, Any]) -> PayoutDraft:
    """Check a POST /v1/payouts body against the documented rules."""
    external_id = optional_string(data, "externalId", max_length=MAX_EXTERNAL_ID)
    if "amount" not in data:
        raise bad_request("amount is required")
    amount = parse_amount(data["amount"])
    currency = required_string(data, "currency")
    payment_type = required_string(data, "paymentType")
    if payment_type not in catalogue.payment_types():
        allowed = ", ".join(catalogue.payment_types())
        raise bad_request(f"paymentType {payment_type!r} is not enabled; allowed: {allowed}")
    currencies = catalogue.currencies_for(payment_type)
    if currency not in currencies:
        raise bad_request(
            f"currency {currency!r} is not allowed for {payment_type}; "
            f"allowed: {', '.join(currencies)}"
        )
    _check_amount_for_currency(amount, currency)
    account = data.get("account")
    if not isinstance(account, dict):
        raise bad_request("account is required and must be an object")
    for key in ("name", "requisites", "userId"):
        required_string(account, key, "account.")
    _check_requisites(payment_type, account)
    return PayoutDraft(
        amount=amount,
        currency=currency,
        payment_type=payment_type,
        account=account,
        service_id=_service_id(data.get("serviceId"), payment_type, currency),
        external_id=external_id,
        callback_url=optional_string(data, "callbackUrl"),
        note=optional_string(data, "note"),
    )


def _check_amount_for_currency(amount: Decimal, currency: str) -> None:
    if currency in catalogue.WHOLE_AMOUNT_CURRENCIES and amount != amount.to_integral_value():
        raise bad_request(f"{currency} amounts must be whole numbers")
    if currency == "XOF" and amount % 5 != 0:
        raise bad_request("XOF amounts must be multiples of 5")


def _check_requisites(payment_type: str, account: dict[str, Any]) -> None:
    requisites: str = account["requisites"]
    if payment_type == "SIM" and not requisites.isdigit():
        raise bad_request("account.requisites for SIM must be digits only, no plus sign")
    if payment_type == "BANK_ACCOUNT" and not (
        requisites.isdigit() and len(requisites) == BANK_ACCOUNT_DIGITS
    ):
        raise bad_request("account.requisites for BANK_ACCOUNT must be a 20-digit account number")
    if payment_type == "SBP":
        phone = requisites.removeprefix("+")
        if not phone.isdigit() or not 10 <= len(phone) <= 15:
            raise bad_request("account.requisites for SBP must be a phone number")
        bank = account.get("bankName")
        if not isinstance(bank, str) or not bank:
            raise bad_request("account.bankName is required for SBP (a bank id from the list)")
        if bank not in {b["id"] for b in catalogue.banks_for_phone(requisites)}:
            raise bad_request(
                f"account.bankName {bank[:40]!r} is not in the banks list for this phone"
            )


def _service_id(value: object, payment_type: str, currency: str) -> int:
    if value is None:
        default = catalogue.default_service(payment_type, currency)
        if default is None:  # every allowed pair has a service; kept for safety
            raise bad_request(f"no default service for {payment_type} {currency}")
        return default.id
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request("serviceId must be an integer")
    service = catalogue.SERVICES_BY_ID.get(value)
    if service is None:
        raise bad_request(f"serviceId {value} is not in the payout services list")
    if service.payment_type != payment_type or service.currency != currency:
        raise bad_request(
            f"serviceId {value} serves {service.payment_type} {service.currency}, "
            f"not {payment_type} {currency}"
        )
    return value
