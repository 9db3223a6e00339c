"""Warnings that do not block a row: likely double payments and amounts far above the median."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import numpy.typing as npt
import pandas as pd

from payflow.intake.identity import canonical_column
from payflow.intake.problems import Problem, shown_value
from payflow.model import AMOUNT_OUTLIER, DERIVED_PREFIX, DOUBLE_PAYMENT
from payflow.schemas.column_rules import CENTS, KIND
from payflow.schemas.iso4217 import amount_text
from payflow.schemas.requisites import ACCEPTED_IS_CANONICAL
from payflow.schemas.rules import RulesTable
from payflow.schemas.text_checks import cells

OUTLIER_FACTOR = 20


def find_warnings(frame: pd.DataFrame, table: RulesTable) -> list[Problem]:
    """Warnings among `frame`'s rows (prepared, and every one passed every rule), by row."""
    warnings = _double_payments(frame, _accepted_canonical(frame, table)) + _outliers(frame)
    warnings.sort(key=lambda p: (p.row, p.rule))
    return warnings


RECIPIENT = "_recipient"


def _accepted_canonical(frame: pd.DataFrame, table: RulesTable) -> npt.NDArray[np.bool_]:
    """True where the row's requisites are in canonical form as written: its destination's
    requisites rule, which every row here passed, accepts no other text (ACCEPTED_IS_CANONICAL)."""
    kinds = [
        index
        for index, d in enumerate(table.destinations)
        if (d.requisites_rule, d.payment_type) in ACCEPTED_IS_CANONICAL
    ]
    accepted: npt.NDArray[np.bool_] = np.isin(frame[KIND].to_numpy(), kinds)
    return accepted


def _double_payments(
    frame: pd.DataFrame, as_written: npt.NDArray[np.bool_] | None = None
) -> list[Problem]:
    # The recipient in canonical form: 79351230001 and 89351230001 are one phone (invariant 11).
    # A wallet phone or an account its rule accepted is already in that form (3 rows in 4 of
    # the bench's million): neither trimmed nor matched again.
    recipients = canonical_column(
        frame.get("paymentType"), frame["requisites"], as_written
    ).to_numpy()
    currencies, cents = cells(frame["currency"]), frame[CENTS].to_numpy()
    # Only the rows whose keys may repeat are compared: a frame of every row's three keys, and
    # the tables that found its repeats, were the peak of a million-row validation.
    maybe = _keys_may_repeat(recipients, cents, currencies)
    keys = [RECIPIENT, CENTS, "currency"]
    keyed = pd.DataFrame(
        {RECIPIENT: recipients[maybe], CENTS: cents[maybe], "currency": currencies[maybe]},
        index=frame.index[maybe],
    )
    repeated = keyed.duplicated(keys, keep=False).to_numpy()
    shared = keyed.loc[repeated].assign(
        requisites=cells(frame["requisites"])[maybe][repeated],
        externalId=cells(frame["externalId"])[maybe][repeated],
    )
    if shared.empty:
        return []
    distinct_ids = shared.groupby(keys, sort=False)["externalId"].transform("nunique")
    shared = shared[distinct_ids > 1]
    all_rows = shared.index.tolist()
    ids, requisites = shared["externalId"].tolist(), shared["requisites"].tolist()
    problems: list[Problem] = []
    for positions in shared.groupby(keys, sort=False).indices.values():
        rows = [all_rows[p] for p in positions]
        for position, row in zip(positions, rows, strict=True):
            others = ", ".join(str(r) for r in rows if r != row)
            # A file without externalIds gave its rows ids of their own: there is no other
            # externalId the operator wrote to speak of, only the other row.
            derived = str(ids[position]).startswith(DERIVED_PREFIX)
            problems.append(
                Problem(
                    row,
                    "requisites",
                    DOUBLE_PAYMENT,
                    f"same recipient, amount and currency as row {others}"
                    + ("" if derived else " with another externalId")
                    + ": a likely double payment",
                    ids[position],
                    shown_value("requisites", requisites[position]),
                )
            )
    return problems


def _keys_may_repeat(
    texts: npt.NDArray[np.object_], numbers: npt.NDArray[np.int64], more: npt.NDArray[np.object_]
) -> npt.NDArray[np.bool_]:
    """True where the row's three keys may be another row's too: every row whose keys are, and
    the rare row whose keys only share a 64-bit hash with another's (the exact test follows).
    Python's own hashes, and a table of numbers: no table of a million texts."""
    combined = np.zeros(len(texts), dtype=np.uint64)
    for hashes in (
        np.fromiter(map(hash, texts), np.int64, len(texts)),
        numbers,
        np.fromiter(map(hash, more), np.int64, len(more)),
    ):
        combined = combined * np.uint64(1_000_003) ^ hashes.view(np.uint64)
    found: npt.NDArray[np.bool_] = pd.Series(combined, copy=False).duplicated(keep=False).to_numpy()
    return found


def _outliers(frame: pd.DataFrame) -> list[Problem]:
    # Twice the median of integer cents is an exact integer, so the comparison is exact too.
    # Grouped by the object array: grouping by pandas' string column took twice as long.
    medians = frame[CENTS].groupby(cells(frame["currency"])).transform("median")
    twice_median = (medians * 2).round()
    twice_median = twice_median.astype("int64")
    over = (frame[CENTS] * 2 > twice_median * OUTLIER_FACTOR).to_numpy()
    # Read as lists, not a cell at a time: .at took 0.1 ms a cell, seconds for 15,000 rows.
    currencies = cells(frame["currency"])[over].tolist()
    return [
        Problem(
            row,
            "amount",
            AMOUNT_OUTLIER,
            f"amount is more than {OUTLIER_FACTOR} times the batch median for "
            f"{currency!s} (median {_median(twice, str(currency))})",
            str(external_id),
            str(amount),
        )
        for row, currency, twice, external_id, amount in zip(
            frame.index[over].tolist(),
            currencies,
            twice_median.to_numpy()[over].tolist(),
            cells(frame["externalId"])[over].tolist(),
            cells(frame["amount"])[over].tolist(),
            strict=True,
        )
    ]


def _median(twice_cents: int, currency: str) -> str:
    return amount_text(Decimal(int(twice_cents)) / 200, currency)
