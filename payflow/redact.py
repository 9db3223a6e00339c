"""Masking of personal data before it reaches a log, a report or an artifact (invariant 6)."""

from __future__ import annotations

VISIBLE = 4


def mask_requisites(value: str | None) -> str:
    """Keep only the last four characters: `2250700001234` -> `*********1234`."""
    if not value:
        return ""
    if len(value) <= VISIBLE:
        return "*" * len(value)
    return "*" * (len(value) - VISIBLE) + value[-VISIBLE:]
