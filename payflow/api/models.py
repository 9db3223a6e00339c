"""Payout-side models: payout request and object, banks, payout services, merchant balance.

Order, H2H and refund models live in `orders.py` and `refunds.py`; all are re-exported here.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from payflow.api.base import ApiModel, Money, RequestModel, ServiceText, UtcDatetime, check_currency
from payflow.api.orders import Card, Customer, H2HStatus, H2HStatusValue, Order, OrderRequest
from payflow.api.refunds import Refund, RefundRequest

__all__ = [
    "Balance",
    "Bank",
    "Card",
    "Customer",
    "H2HStatus",
    "H2HStatusValue",
    "Order",
    "OrderRequest",
    "Payout",
    "PayoutAccount",
    "PayoutAccountEcho",
    "PayoutRequest",
    "PayoutService",
    "PayoutStatus",
    "Refund",
    "RefundRequest",
]

EXTERNAL_ID_MAX = 255


class PayoutStatus(StrEnum):
    """Payout statuses named in the spec; a payout may carry others, kept as plain text."""

    CREATED = "CREATED"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"
    EXPIRED = "EXPIRED"


FINAL_PAYOUT_STATUSES = frozenset(
    {PayoutStatus.COMPLETED, PayoutStatus.FAILED, PayoutStatus.CANCELED, PayoutStatus.EXPIRED}
)


class PayoutAccount(RequestModel):
    """Recipient of a payout request; personal fields stay out of repr."""

    name: str
    requisites: str = Field(repr=False)
    user_id: str
    bank_name: str | None = None
    user_email: str | None = Field(default=None, repr=False)
    user_phone: str | None = Field(default=None, repr=False)
    user_ip: str | None = Field(default=None, repr=False)


class PayoutRequest(RequestModel):
    """Body of POST /v1/payouts; `amount` goes out as an exact JSON number."""

    amount: Money = Field(gt=0)
    currency: str
    payment_type: str = Field(min_length=1)
    account: PayoutAccount
    service_id: int | None = None
    note: str | None = None
    external_id: str | None = Field(default=None, min_length=1, max_length=EXTERNAL_ID_MAX)
    callback_url: str | None = None

    _currency = field_validator("currency")(check_currency)


class PayoutAccountEcho(ApiModel):
    """Recipient details as the service echoes them back; every field optional."""

    name: str | None = None
    requisites: str | None = Field(default=None, repr=False)
    user_id: str | None = None
    bank_name: str | None = None
    user_email: str | None = Field(default=None, repr=False)
    user_phone: str | None = Field(default=None, repr=False)
    user_ip: str | None = Field(default=None, repr=False)


class Payout(ApiModel):
    """The payout object; `status` is text so a status the spec does not name is kept."""

    id: str
    status: str
    merchant_id: str | None = None
    amount: Money | None = None
    currency: str | None = None
    external_id: str | None = None
    account: PayoutAccountEcho | None = None
    type: str | None = None
    requisites: dict[str, Any] | None = Field(default=None, repr=False)
    status_message: ServiceText | None = None
    metadata: dict[str, Any] | None = None
    callback_url: str | None = None
    created_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None
    completed_at: UtcDatetime | None = None

    @property
    def is_final(self) -> bool:
        """True for COMPLETED, FAILED, CANCELED, EXPIRED (COMPLETED may still be corrected)."""
        return self.status in FINAL_PAYOUT_STATUSES


class Bank(ApiModel):
    """One record of GET /v1/payouts/banks: `id` goes into `account.bankName`."""

    id: str
    name: str | None = None


class PayoutService(ApiModel):
    """One payout service; the spec does not show its fields, so all are optional."""

    id: int | str | None = None
    name: str | None = None
    currency: str | None = None
    payment_type: str | None = None


_AMOUNT_KEYS = ("available", "balance", "amount")


class Balance(ApiModel):
    """GET /v1/merchants/balance: only `merchantId` is documented; the rest is kept as given."""

    merchant_id: str | None = None

    def available_by_currency(self) -> dict[str, Decimal] | None:
        """Available amount per currency when the body has a recognisable shape, else None.

        Recognised: a list of {currency, available|balance|amount}, a mapping currency -> amount
        (or -> {available|balance|amount}), or one such record at the top level.
        """
        extra = dict(self.model_extra or {})
        found = {key: _read_balances(value) for key, value in extra.items()}
        found[""] = _read_balances(extra)
        readable = {key: result for key, result in found.items() if result is not None}
        if len(readable) == 1:
            return next(iter(readable.values()))
        # Several candidates (say "available" and "held"): only the one named available counts.
        return readable.get("available")


def _read_balances(value: Any) -> dict[str, Decimal] | None:
    if isinstance(value, list):
        merged: dict[str, Decimal] = {}
        for item in value:
            one = _read_record(item)
            if one is None or one[0] in merged:
                return None
            merged[one[0]] = one[1]
        return merged or None
    if isinstance(value, dict):
        record = _read_record(value)
        if record is not None:
            return {record[0]: record[1]}
        if value and all(isinstance(k, str) and len(k) == 3 and k.isupper() for k in value):
            amounts = {code: _amount_of(item) for code, item in value.items()}
            if all(amount is not None for amount in amounts.values()):
                return {code: amount for code, amount in amounts.items() if amount is not None}
    return None


def _read_record(item: Any) -> tuple[str, Decimal] | None:
    if not isinstance(item, dict) or not isinstance(item.get("currency"), str):
        return None
    amount = _amount_of(item)
    return (item["currency"].upper(), amount) if amount is not None else None


def _amount_of(value: Any) -> Decimal | None:
    if isinstance(value, dict):
        for key in _AMOUNT_KEYS:
            if key in value:
                return _amount_of(value[key])
        return None
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        return None
    try:
        amount = Decimal(value.strip() if isinstance(value, str) else value)
    except InvalidOperation:
        return None
    return amount if amount.is_finite() else None
