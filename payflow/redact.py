"""What outside text may show in a log, a report, an artifact or a terminal: personal data masked
(invariant 6), control characters escaped."""

from __future__ import annotations

import re

VISIBLE = 4
# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
CONTROL_PATTERN = "[\x00-\x1f\x7f-\x9f\u2028\u2029]"
_CONTROL = re.compile(CONTROL_PATTERN)


def printable(text: str) -> str:
    """`text` with each control character shown as an escape (`\\x0b`): a report or a terminal
    shows it, and neither an XLSX writer nor an escape sequence can trip over it."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


# What requisites look like inside free text: a phone, an account, a card or an IBAN-like number
# (ten or more digits, maybe grouped by spaces or dashes, a phone's code in parentheses as in
# +7 (912) 345-67-89), or an email address. A run going on as a time (2026-11-27 10:03:04) is
# a timestamp, not requisites.
_REQUISITES_IN_TEXT = re.compile(
    r"(?<![\w@])(?:[A-Z]{2}\d{2}[ -]?)?\(?(?:\d(?:[ -]|\)\s?|\s?\()?){9,}\d(?!\w|:\d)"
    r"|[^\s@<>\"']+@[^\s@<>\"']+\.\w+"
)


def mask_requisites(value: str | None) -> str:
    """Keep only the last four characters: `2250700001234` -> `*********1234`."""
    if not value:
        return ""
    if len(value) <= VISIBLE:
        return "*" * len(value)
    return "*" * (len(value) - VISIBLE) + value[-VISIBLE:]


def service_text(text: str, *secrets: str | None) -> str:
    """`text` from the payments service as payflow keeps and shows it: whatever looks like
    requisites masked, each of `secrets` (the API token) replaced whole, control characters
    escaped. The spec does not say its messages never echo them, and a terminal obeys escapes."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[token]")
    return printable(_REQUISITES_IN_TEXT.sub(lambda found: mask_requisites(found.group()), text))
