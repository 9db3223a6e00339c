"""Refund models: the refund request and the refund object."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from payflow.api.base import ApiModel, Money, RequestModel, ServiceText, UtcDatetime


class RefundStatus(StrEnum):
    """Refund statuses named in the spec; others are kept as plain text."""

    MANUAL = "MANUAL"
    PENDING = "PENDING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"


class RefundRequest(RequestModel):
    """Body of POST /v1/refunds; only full refunds exist, so `amount` is optional."""

    order_id: str = Field(min_length=1)
    amount: Money | None = Field(default=None, gt=0)
    external_id: str | None = Field(default=None, min_length=1, max_length=255)
    reason: str | None = Field(default=None, max_length=1000)
    callback_url: str | None = None


class Refund(ApiModel):
    """The refund object; `debit_amount` is held while MANUAL or PENDING."""

    id: str
    status: str
    order_id: str | None = None
    order_external_id: str | None = None
    terminal_id: str | None = None
    merchant_id: str | None = None
    amount: Money | None = None
    currency: str | None = None
    debit_amount: Money | None = None
    debit_currency: str | None = None
    debit_basis: str | None = None
    external_id: str | None = None
    reason: str | None = None
    callback_url: str | None = None
    status_message: ServiceText | None = None
    gateway_refund_id: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None
    completed_at: UtcDatetime | None = None
