"""Masking of personal data before it reaches a log, a report or an artifact (invariant 6)."""

from __future__ import annotations

import re

VISIBLE = 4

# What requisites look like inside free text: a phone, an account, a card or an IBAN-like number
# (ten or more digits, maybe grouped by spaces or dashes), or an email address.
_REQUISITES_IN_TEXT = re.compile(
    r"(?<![\w@])(?:[A-Z]{2}\d{2}[ -]?)?(?:\d[ -]?){9,}\d(?!\w)|[^\s@<>\"']+@[^\s@<>\"']+\.\w+"
)


def mask_requisites(value: str | None) -> str:
    """Keep only the last four characters: `2250700001234` -> `*********1234`."""
    if not value:
        return ""
    if len(value) <= VISIBLE:
        return "*" * len(value)
    return "*" * (len(value) - VISIBLE) + value[-VISIBLE:]


def mask_requisites_in_text(text: str, *secrets: str | None) -> str:
    """`text` from the payments service with whatever looks like requisites masked, and each of
    `secrets` (the API token) replaced whole: the spec does not say its messages never echo them."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[token]")
    return _REQUISITES_IN_TEXT.sub(lambda found: mask_requisites(found.group()), text)
