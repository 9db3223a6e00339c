"""The batch columns of a payout request and how spreadsheet headers map onto them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

REQUIRED_COLUMNS = ("amount", "currency", "paymentType", "requisites", "name", "userId")
OPTIONAL_COLUMNS = (
    "serviceId",
    "bankName",
    "externalId",
    "note",
    "userEmail",
    "userPhone",
    "userIp",
    "callbackUrl",
    "bik",
)
ALL_COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS

# Columns whose values are a recipient's personal data: masked in every report.
PERSONAL_COLUMNS = frozenset({"requisites", "name", "userEmail", "userPhone", "userIp"})

_SEPARATORS = re.compile(r"[\s_\-.]+")


# A UTF-8 byte order mark read back as Windows-1252 or Windows-1251 text: the file was opened
# in the wrong encoding and saved again, so every non-Latin name in it is garbled too.
MISREAD_BOMS = ("\u00ef\u00bb\u00bf", "\u043f\u00bb\u0457")


def header_key(header: str) -> str:
    """`External ID`, `external_id` and `externalId` all give `externalid`."""
    return _SEPARATORS.sub("", header.strip().lstrip("\ufeff")).lower()


@dataclass(frozen=True)
class ReadColumns:
    """The columns one kind of file is read by, for the checks that must know which cells it
    sends (a hidden or merged cell, a date or a formula's error): payouts, refunds, links; and
    how the hidden-row and hidden-column messages say what becomes of the row."""

    columns: tuple[str, ...]
    free_text: frozenset[str] = frozenset()  # columns that may hold a date (a note, a reason)
    # What a row refused for a hidden cell becomes, and what unhiding it lets the operator do:
    # a refund is not a payout ("the row is not refunded; unhide it to refund it").
    fate: str = "is not paid"
    remedy: str = "pay it"
    _by_key: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {c.lower(): c for c in self.columns})

    def column_of(self, header: str) -> str | None:
        """The column a header names, matched case- and separator-insensitively; None: unread."""
        return self._by_key.get(header_key(header))


PAYOUT_COLUMNS = ReadColumns(ALL_COLUMNS, frozenset({"note"}))


@dataclass(frozen=True)
class HeaderMatch:
    """Which source header feeds which batch column, and what was left over."""

    renames: dict[str, str]  # source header -> canonical column
    unknown: tuple[str, ...]
    missing_required: tuple[str, ...]
    duplicated: tuple[str, ...]  # canonical columns given by more than one header


def match_headers(headers: Sequence[str]) -> HeaderMatch:
    """Match headers case- and separator-insensitively against the batch columns."""
    renames: dict[str, str] = {}
    unknown: list[str] = []
    seen: dict[str, str] = {}
    duplicated: list[str] = []
    for header in headers:
        column = PAYOUT_COLUMNS.column_of(header)
        if column is None:
            if header.strip():
                unknown.append(header.strip())
            continue
        if column in seen:
            duplicated.append(column)
            continue
        seen[column] = header
        renames[header] = column
    missing = tuple(c for c in REQUIRED_COLUMNS if c not in seen)
    return HeaderMatch(renames, tuple(unknown), missing, tuple(duplicated))
