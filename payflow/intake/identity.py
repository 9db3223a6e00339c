"""The externalId of a row that has none: derived from the row's own content, never the file.

A derived id is `pf-<24 hex of the row's content>-<n>`, where the content is the recipient's
requisites in their canonical form (schemas.recipients: `89351230001` and `79351230001` are one
SBP phone), amount, currency, paymentType, userId and bank as written in the row (trimmed;
amount as a number, so 100 and 100.00 agree; currency and paymentType in capitals), and `n`
counts identical rows from the top of the file (1 for the first). Editing, adding, removing or
reordering other rows, or saving the file again with other line endings, leaves every other
row's id as it was (design.md, invariant 2).

Before canonical forms (derivation 1) the requisites went in as written. A row whose id differs
between the two derivations keeps its first-derivation id when the ledger already holds that id
(`legacy_external_ids`, applied by payflow.ledger.register), so a row paid before the change is
never given a new id, which would pay it again.
"""

from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal, InvalidOperation
from itertools import compress

import numpy as np
import numpy.typing as npt
import pandas as pd

from payflow.model import DERIVED_PREFIX, canonical_amount
from payflow.schemas.recipients import ALREADY_CANONICAL, CANONICAL, canonical_requisites

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


def canonical_column(
    kinds: pd.Series | None,
    written: pd.Series,
    as_written: npt.NDArray[np.bool_] | None = None,
) -> pd.Series:
    """`written` requisites in canonical form (schemas.recipients) by each row's paymentType:
    the rows already in canonical form are found by one compiled match per row, and only the
    rest go through their destination's function. `as_written`: rows the caller knows to be in
    canonical form already (a rule that accepts only such text accepted them), taken as they
    are."""
    if as_written is None:
        text = _stripped(written)
        pending = None
    else:
        # Only the other rows are trimmed and matched: a copy of the references, then theirs.
        text = written.to_numpy(dtype=object, copy=True)
        pending = ~as_written
        text[pending] = _stripped(written[pending])
    if kinds is None:
        return pd.Series(text, index=written.index, dtype=object)
    # Each distinct paymentType normalised once: upper-casing every cell made a million new
    # strings, the largest part of a million-row validation's peak memory.
    # Factorized as an object array: pandas' string type takes about twice as long.
    codes, distinct = pd.factorize(kinds.to_numpy(dtype=object, copy=False), use_na_sentinel=False)
    for code, kind in enumerate(distinct.tolist()):
        name = "" if pd.isna(kind) else str(kind).strip().upper()
        if name not in CANONICAL:
            continue  # no form of its own: trimmed, as written
        at = np.flatnonzero(codes == code if pending is None else (codes == code) & pending)
        cells = text[at].tolist()
        fast = ALREADY_CANONICAL.get(name)
        # A row already in canonical form is left as it is, which its function would return too.
        if fast is not None:
            pattern = re.compile(fast)
            done = np.fromiter(map(bool, map(pattern.fullmatch, cells)), bool, len(cells))
            at, cells = at[~done], list(compress(cells, ~done))
        if cells:
            text[at] = [canonical_requisites(name, cell) for cell in cells]
    return pd.Series(text, index=written.index, dtype=object)


def _stripped(written: pd.Series) -> npt.NDArray[np.object_]:
    values = written.to_numpy(dtype=object, copy=False)
    try:
        # str.strip returns the cell itself when it has nothing to trim: no new string.
        return np.fromiter(map(str.strip, values), object, len(values))
    except TypeError:  # a blank or a cell that is no text (a caller's frame): as astype(str)
        text = written.fillna("").astype(str).tolist()
        return np.array([cell.strip() for cell in text], dtype=object)


def _canonical_cells(frame: pd.DataFrame) -> list[str]:
    canonical: list[str] = canonical_column(frame.get("paymentType"), frame["requisites"]).tolist()
    return canonical


def derived_external_ids(
    frame: pd.DataFrame,
    *,
    columns: tuple[str, ...] = IDENTITY_COLUMNS,
    prefix: str = DERIVED_PREFIX,
    canonical: bool = True,
) -> pd.Series:
    """A derived externalId for every row of `frame` (text cells), aligned with its index.

    Payout batches use the defaults; refund batches pass REFUND_IDENTITY_COLUMNS and
    REFUND_PREFIX (a refund is identified by its order and amount). `canonical=False`: the
    first derivation, requisites as written."""
    if frame.empty:
        return pd.Series([], index=frame.index, dtype=object)
    blank = [""] * len(frame)
    cells = [frame[column].fillna("").tolist() if column in frame else blank for column in columns]
    if canonical and "requisites" in columns and "requisites" in frame:
        cells[columns.index("requisites")] = _canonical_cells(frame)
    digests = pd.Series(
        [_digest(row, columns) for row in zip(*cells, strict=True)], index=frame.index
    )
    occurrence = digests.groupby(digests, sort=False).cumcount() + 1
    return prefix + digests + "-" + occurrence.astype(str)


def legacy_external_ids(frame: pd.DataFrame, derived: pd.Series) -> dict[str, str]:
    """Derived id -> the first derivation's id, for the rows of `frame` where the two differ
    (requisites not already in canonical form): few rows, looked up by the ledger at register."""
    if frame.empty or "requisites" not in frame:
        return {}
    written = [str(text).strip() for text in frame["requisites"].fillna("").tolist()]
    if written == _canonical_cells(frame):
        return {}  # the common case: every row already in canonical form, ids and counts alike
    legacy = derived_external_ids(frame, canonical=False)
    differs = legacy != derived
    return dict(zip(derived[differs].tolist(), legacy[differs].tolist(), strict=True))
