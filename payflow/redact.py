"""What outside text may show in a log, a report, an artifact or a terminal: personal data masked
(invariant 6), control characters escaped."""

from __future__ import annotations

import re

from payflow.schemas.iso4217 import ISO_4217_CODES

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
# (ten or more digits, maybe grouped: by spaces of any width, dots, dashes, slashes or
# underscores, a phone's code in parentheses as in +7 (912) 345-67-89), or an email address. A run
# going on as a time (2026-11-27 10:03:04), or going on from one (10:03:04.123456789Z), is a
# timestamp, not requisites. Letters glued to the digits do not make them safe: acct4081...,
# an IBAN's account after its bank code, or one with a letter inside (FR14...0013M02606).
_SEPARATOR = r"(?:[\s._/\-\u2010-\u2015\u2212]{1,3}|\)\s?|\s?\()"
_REQUISITES_IN_TEXT = re.compile(
    rf"(?<![\d@])(?<!\d:)(?:[A-Z]{{2}}\d{{2}}[ -]?)?\(?(?:\d{_SEPARATOR}?){{9,}}\d(?!\d|:\d)"
    r"|[^\s@<>\"']+@[^\s@<>\"']+\.\w+"
)

# What is plainly an amount, not requisites: digits with 1 to 3 decimals beside a currency or
# after a word naming an amount ("insufficient balance: needed 1250000000.00 RUB"), or a whole
# number with both ("balance RUB 1250000000"). At most 15 digits before the point (a card has 16,
# an account 20), no leading zero (local phones start with 0), thousands grouped in threes by one
# kind of space (or by dots before a decimal comma).
_AMOUNT = re.compile(
    r"-?(?P<whole>[1-9]\d{0,14}"
    r"|[1-9]\d{0,2}(?P<group>[ \u00a0\u2009\u202f.])\d{3}(?:(?P=group)\d{3}){0,3})"
    r"(?P<decimals>[.,]\d{1,3})?"
)
_CURRENCY = "|".join(sorted(ISO_4217_CODES)) + r"|[₽$€£¥₸₴]|руб\.?|rub"
_AMOUNT_WORDS = (
    r"amount|sum|total|balance|available|held|hold|needed|needs?|required|requested|missing|"
    r"short|limit|maximum|minimum|max|min|fee|commission|debit|credit|"
    r"сумма|сумму|суммы|баланс|остаток|лимит|доступно|требуется|комиссия"
)
_WORD_BEFORE = re.compile(rf"(?i:\b(?:{_AMOUNT_WORDS}))\s*[:=]?\s*(?P<code>(?:{_CURRENCY})\s?)?$")
_CURRENCY_BEFORE = re.compile(rf"(?<!\w)(?:{_CURRENCY})\s?$")
_CURRENCY_AFTER = re.compile(rf"\s?(?:{_CURRENCY})(?!\w)")
_DECIMAL_COMMA = re.compile(r",\d{1,3}(?![\d.,])")
_CONTEXT = 48  # characters before a number that may name it an amount


def _plainly_an_amount(found: re.Match[str]) -> bool:
    """True when the run of digits `found` is an amount, by its shape and what stands beside
    it; anything unsure is not."""
    text, start, end = found.string, found.start(), found.end()
    comma = _DECIMAL_COMMA.match(text, end)  # the run stops before a decimal comma
    end = comma.end() if comma else end
    start -= text.endswith("-", 0, start)  # a minus sign
    shape = _AMOUNT.fullmatch(text, start, end)
    if shape is None or (shape["group"] and shape["group"] == (shape["decimals"] or " ")[0]):
        return False
    if shape["decimals"] and sum(c.isdigit() for c in shape["whole"]) < 10:
        return True  # fewer than ten digits before the point: never requisites
    near = max(0, start - _CONTEXT)
    word = _WORD_BEFORE.search(text, near, start)
    currency_after = _CURRENCY_AFTER.match(text, end) is not None
    if shape["decimals"]:
        return bool(word or currency_after or _CURRENCY_BEFORE.search(text, near, start))
    return word is not None and (word["code"] is not None or currency_after)


def _masked(found: re.Match[str]) -> str:
    """Requisites masked to their last characters; an amount left as the service wrote it."""
    if found.group()[0].isdigit() and _plainly_an_amount(found):
        return found.group()
    return mask_requisites(found.group())


def mask_requisites(value: str | None) -> str:
    """Keep only the last four characters: `2250700001234` -> `*********1234`."""
    if not value:
        return ""
    if len(value) <= VISIBLE:
        return "*" * len(value)
    return "*" * (len(value) - VISIBLE) + value[-VISIBLE:]


def mask_rejected(value: str | None) -> str:
    """A rejected cell as a report shows it: letters and digits masked but the last four, every
    other character kept, so the one that caused the reject shows (`+7935***0106` read
    `********0106`, hiding the `+`); still nothing that identifies the recipient."""
    if not value:
        return ""
    # Four characters or fewer: all masked, as mask_requisites masks them.
    head, tail = (value, "") if len(value) <= VISIBLE else (value[:-VISIBLE], value[-VISIBLE:])
    return "".join("*" if character.isalnum() else character for character in head) + tail


def service_text(text: str, *secrets: str | None) -> str:
    """`text` from the payments service as payflow keeps and shows it: whatever looks like
    requisites masked, each of `secrets` (the API token) replaced whole, control characters
    escaped. The spec does not say its messages never echo them, and a terminal obeys escapes."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[token]")
    return printable(_REQUISITES_IN_TEXT.sub(_masked, text))
