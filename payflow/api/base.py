"""Shared building blocks of the API models: field naming, money and time types.

Requests and responses use camelCase on the wire and snake_case in Python. Response models keep
fields the spec does not show (extra="allow") and read numbers where text is documented.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel

from payflow.redact import service_text

CURRENCY_PATTERN = re.compile(r"^[A-Z]{3}$")


def _no_float(value: Any) -> Any:
    if isinstance(value, float):
        raise ValueError("amounts must be Decimal or text, never float")
    return value


def _finite(value: Decimal) -> Decimal:
    if not value.is_finite():
        raise ValueError("amount must be a finite number")
    return value


def _utc(value: datetime) -> datetime:
    # The spec only says ISO 8601; a time without an offset is read as UTC.
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


Money = Annotated[Decimal, BeforeValidator(_no_float), AfterValidator(_finite)]
UtcDatetime = Annotated[datetime, AfterValidator(_utc)]
# The service's own words (statusMessage): kept, with anything like requisites masked, since they
# go on to reports, artifacts and screens (design invariant 6).
ServiceText = Annotated[str, AfterValidator(service_text)]


# camelCase on the wire, snake_case (or the wire name) accepted when building in Python.
CAMEL_CASE = ConfigDict(
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
)


class ApiModel(BaseModel):
    """A response object: camelCase aliases, unknown fields kept, tolerant of numbers as text."""

    model_config = ConfigDict(**CAMEL_CASE, extra="allow", coerce_numbers_to_str=True)


class RequestModel(BaseModel):
    """A request body: camelCase on the wire; fields the spec does not list pass through."""

    model_config = ConfigDict(**CAMEL_CASE, extra="allow")

    def to_body(self) -> dict[str, Any]:
        """The JSON-ready body (Decimals kept as Decimal for exact serialization), no nulls."""
        return self.model_dump(by_alias=True, exclude_none=True)


def check_currency(value: str) -> str:
    """ISO 4217 alphabetic code, upper case."""
    if not CURRENCY_PATTERN.match(value):
        raise ValueError("currency must be a three-letter ISO 4217 code in upper case")
    return value
