"""Order-side models: order request and object, card and customer data, H2H status."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import Field, SecretStr, field_serializer, field_validator, model_validator

from payflow.api.base import ApiModel, Money, RequestModel, check_currency
from payflow.api.jsonbody import decimal_text

EXPIRY_PATTERN = re.compile(r"^(0[1-9]|1[0-2])/\d{2}$")

# extraParams of a wallet order -> customer fields that variant requires (spec, wallet payments).
_STANDARD = ("country", "email", "first_name", "last_name", "ip")
_FULL = ("email", "phone", "first_name", "last_name", "country", "city", "state", "postcode")
WALLET_REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "walletA-pay": _STANDARD,
    "walletB-pay": _STANDARD,
    "WALLETAPAY": (*_FULL, "address"),
    "WALLETBPAY": (*_FULL, "address"),
    "walletA_pay": ("email",),
    "walletB_pay": ("email",),
    "walletApay": ("email", "ip"),
    "walletBpay": ("email", "ip"),
}


class H2HStatusValue(StrEnum):
    """H2H card-stage statuses named in the spec."""

    INITIALIZING = "INITIALIZING"
    PROCESSING = "PROCESSING"
    SUCCESS = "SUCCESS"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    EXPIRED = "EXPIRED"


class Card(RequestModel):
    """Card data (PCI DSS): number and CVV are secrets, shown in no repr or log."""

    cardholder_name: str = Field(min_length=1)
    card_number: SecretStr
    cvv: SecretStr
    expiry_date: str

    @field_validator("expiry_date")
    @classmethod
    def _expiry_is_mm_yy(cls, value: str) -> str:
        if not EXPIRY_PATTERN.match(value):
            raise ValueError("expiryDate must be MM/YY")
        return value

    @field_serializer("card_number", "cvv")
    def _reveal(self, value: SecretStr) -> str:
        return value.get_secret_value()


class Customer(RequestModel):
    """Payer details; which fields are required depends on the terminal or wallet variant."""

    email: str | None = None
    phone: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    birthday: str | None = None
    country: str | None = None
    city: str | None = None
    region: str | None = None
    state: str | None = None  # the wallet full-billing variant names the region `state`
    postcode: str | None = None
    address: str | None = None
    ip: str | None = None


class OrderRequest(RequestModel):
    """Body of POST /v1/orders; `amount` goes out as text, as the spec's examples show."""

    amount: Money = Field(gt=0)
    currency: str
    external_id: str | None = None
    purpose: str | None = None
    success_url: str | None = None
    fail_url: str | None = None
    callback_url: str | None = None
    extra_params: str | None = None
    customer: Customer | None = None
    card: Card | None = None

    _currency = field_validator("currency")(check_currency)

    @field_serializer("amount")
    def _amount_as_text(self, value: Any) -> str:
        return decimal_text(value)

    @model_validator(mode="after")
    def _wallet_customer_complete(self) -> OrderRequest:
        required = WALLET_REQUIRED_FIELDS.get(self.extra_params or "")
        if required:
            customer = self.customer or Customer()
            missing = [name for name in required if not getattr(customer, name)]
            if missing:
                raise ValueError(
                    f"wallet order {self.extra_params} needs customer fields: {', '.join(missing)}"
                )
        return self


class Order(ApiModel):
    """The order object; card data the service might echo is dropped on reading."""

    id: str
    status: str | None = None
    payment_link: str | None = Field(default=None, repr=False)
    amount: Money | None = None
    currency: str | None = None
    external_id: str | None = None
    purpose: str | None = None
    success_url: str | None = None
    fail_url: str | None = None
    callback_url: str | None = None
    extra_params: str | None = None
    customer: dict[str, Any] | None = Field(default=None, repr=False)

    @model_validator(mode="before")
    @classmethod
    def _drop_card(cls, data: Any) -> Any:
        if isinstance(data, dict) and "card" in data:
            return {key: value for key, value in data.items() if key != "card"}
        return data


class H2HStatus(ApiModel):
    """GET /v1/orders/{orderId}/h2h/status: poll while not final; SUCCESS is not payment."""

    status: str
    is_sms_required: bool | None = None

    @property
    def is_final(self) -> bool:
        """True once polling should stop (SUCCESS, CANCELLED, FAILED, EXPIRED)."""
        return self.status not in (H2HStatusValue.INITIALIZING, H2HStatusValue.PROCESSING)


class H2HCode(RequestModel):
    """Body of POST /v1/orders/{orderId}/h2h/code: the bank SMS code the payer received."""

    code: SecretStr

    @field_serializer("code")
    def _reveal(self, value: SecretStr) -> str:
        return value.get_secret_value()
