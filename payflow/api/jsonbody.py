"""JSON in and out without a float ever touching an amount (invariant 7).

The payout request takes `amount` as a JSON number. `json` can only write a Decimal by going
through float, so each Decimal is written as a unique placeholder string and the placeholder is
then replaced by the Decimal's exact text. Responses are read with `parse_float=Decimal`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def decimal_text(value: Decimal) -> str:
    """Exact positional text of a finite Decimal (no exponent): `1E+2` -> `100`."""
    if not value.is_finite():
        raise ValueError("an amount must be a finite number")
    return format(value, "f")


def dumps(data: Any) -> bytes:
    """UTF-8 JSON of `data` with every Decimal written as an exact JSON number."""
    marker = f"decimal-{uuid.uuid4().hex}-"
    numbers: list[str] = []

    def swap(value: Any) -> Any:
        if isinstance(value, Decimal):
            numbers.append(decimal_text(value))
            return f"{marker}{len(numbers) - 1}"
        if isinstance(value, float):
            raise TypeError("floats are not allowed in API bodies; use Decimal")
        if isinstance(value, Mapping):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [swap(item) for item in value]
        return value

    text = json.dumps(swap(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # The closing quote is part of the target, so "...-1" cannot match inside "...-10".
    for index, number in enumerate(numbers):
        text = text.replace(f'"{marker}{index}"', number)
    return text.encode("utf-8")


def loads(content: bytes | str) -> Any:
    """Parse JSON keeping every non-integer number as an exact Decimal."""
    return json.loads(content, parse_float=Decimal)
