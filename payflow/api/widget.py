"""The one-click payout widget payload: the documented rules, checked before anything is signed.

Build with `WidgetPayload(...)`; validation takes the current time from the context key "now"
(an aware datetime) when given, so tests can pin it.
"""

from __future__ import annotations

import base64
import unicodedata
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationInfo,
    field_serializer,
    field_validator,
)

from payflow.api.base import CAMEL_CASE, Money
from payflow.model import canonical_amount

WIDGET_AMOUNT_MIN = Decimal("1")
WIDGET_AMOUNT_MAX = Decimal("99999999.99")
WIDGET_MAX_LIFETIME = timedelta(hours=24)
_CONTROL_CATEGORIES = ("Cc", "Zl", "Zp")  # control characters and Unicode line breaks


class WidgetPayload(BaseModel):
    """JSON the merchant signs to open the widget; unknown fields are refused, as by the widget."""

    model_config = ConfigDict(**CAMEL_CASE, extra="forbid", frozen=True)

    merchant_id: str
    user_id: str = Field(min_length=1, max_length=255)
    amount: Money
    currency: Literal["RUB"]
    external_id: str = Field(min_length=1, max_length=255)
    service_id: StrictInt | None = None
    expires_at: StrictInt

    @field_validator("merchant_id", "user_id", "external_id", "currency", mode="before")
    @classmethod
    def _no_control_characters(cls, value: Any) -> Any:
        if isinstance(value, str) and any(
            unicodedata.category(char) in _CONTROL_CATEGORIES for char in value
        ):
            raise ValueError("must not contain control characters or line breaks")
        return value

    @field_validator("merchant_id")
    @classmethod
    def _merchant_id_is_uuid(cls, value: str) -> str:
        try:
            uuid.UUID(value)
        except ValueError:
            raise ValueError("merchantId must be a UUID") from None
        return value

    @field_validator("amount")
    @classmethod
    def _amount_in_widget_range(cls, value: Decimal) -> Decimal:
        if not WIDGET_AMOUNT_MIN <= value <= WIDGET_AMOUNT_MAX:
            raise ValueError("amount must be from 1 to 99999999.99 RUB")
        if value != value.quantize(Decimal("0.01")):
            raise ValueError("amount must have at most two digits after the point")
        return value

    @field_validator("expires_at")
    @classmethod
    def _expiry_within_a_day(cls, value: int, info: ValidationInfo) -> int:
        context = info.context if isinstance(info.context, dict) else {}
        now = context.get("now") or datetime.now(UTC)
        expires = datetime.fromtimestamp(value, UTC)
        if expires <= now:
            raise ValueError("expiresAt must be in the future")
        if expires - now > WIDGET_MAX_LIFETIME:
            raise ValueError("expiresAt must be at most 24 hours ahead")
        return value

    @field_serializer("amount")
    def _amount_as_text(self, value: Decimal) -> str:
        # Text, not a JSON number: the spec calls a string safer and rejects float artifacts.
        return canonical_amount(value)

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON of the payload; serviceId is left out when not set."""
        return self.model_dump_json(exclude_none=True).encode("utf-8")

    def encode(self) -> str:
        """The `payload` link parameter: base64url (RFC 4648 §5) of the JSON, without padding."""
        return base64.urlsafe_b64encode(self.to_json()).rstrip(b"=").decode("ascii")
