"""The externalId of a row that has none: derived from the row's own content, never the file.

A derived id is `pf-<24 hex of the row's content>-<n>`, where the content is the recipient's
requisites, amount, currency, paymentType, userId and bank as written in the row (trimmed;
amount as a number, so 100 and 100.00 agree; currency and paymentType in capitals), and `n`
counts identical rows from the top of the file (1 for the first). Editing, adding, removing or
reordering other rows, or saving the file again with other line endings, leaves every other
row's id as it was (design.md, invariant 2).
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal, InvalidOperation

import pandas as pd

from payflow.model import DERIVED_PREFIX, canonical_amount

DIGEST_HEX = 24  # 96 bits: no two different rows share one in any realistic ledger
IDENTITY_COLUMNS = ("requisites", "amount", "currency", "paymentType", "userId", "bankName")
UPPER_COLUMNS = frozenset({"currency", "paymentType"})


def _amount_text(cell: str) -> str:
    try:
        amount = Decimal(cell)
    except InvalidOperation:
        return cell  # not a number: validation rejects the row; its id still needs to be stable
    return canonical_amount(amount) if amount.is_finite() else cell


REFUND_PREFIX = "rf-"
REFUND_IDENTITY_COLUMNS = ("orderId", "amount")


def row_identity(cells: dict[str, str]) -> str:
    """The content digest of one row (the columns in IDENTITY_COLUMNS; absent ones count as '')."""
    return _digest(tuple(cells.get(column) or "" for column in IDENTITY_COLUMNS))


def _digest(row: tuple[str, ...], columns: tuple[str, ...] = IDENTITY_COLUMNS) -> str:
    values: list[str] = []
    for column, cell in zip(columns, row, strict=True):
        value = cell.strip()
        if column == "amount":
            value = _amount_text(value)
        elif column in UPPER_COLUMNS:
            value = value.upper()
        values.append(value)
    canonical = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:DIGEST_HEX]


def derived_external_ids(
    frame: pd.DataFrame,
    *,
    columns: tuple[str, ...] = IDENTITY_COLUMNS,
    prefix: str = DERIVED_PREFIX,
) -> pd.Series:
    """A derived externalId for every row of `frame` (text cells), aligned with its index.

    Payout batches use the defaults; refund batches pass REFUND_IDENTITY_COLUMNS and
    REFUND_PREFIX (a refund is identified by its order and amount)."""
    if frame.empty:
        return pd.Series([], index=frame.index, dtype=object)
    blank = [""] * len(frame)
    cells = [frame[column].fillna("").tolist() if column in frame else blank for column in columns]
    digests = pd.Series(
        [_digest(row, columns) for row in zip(*cells, strict=True)], index=frame.index
    )
    occurrence = digests.groupby(digests, sort=False).cumcount() + 1
    return prefix + digests + "-" + occurrence.astype(str)
