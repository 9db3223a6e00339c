"""The likely-double-payment warning finds its rows through hashes first (no table of every
row's keys); it must name exactly the rows a plain comparison of the three keys names."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from payflow.schemas.batch_warnings import _double_payments, _keys_may_repeat
from payflow.schemas.column_rules import CENTS

ROW = st.tuples(
    st.sampled_from(["SBP", "SIM", "BANK_ACCOUNT"]),
    st.sampled_from(["79161234567", "89161234567", "9161234567", "2250700001234", "x"]),
    st.sampled_from([100, 150, 100_000]),
    st.sampled_from(["RUB", "XOF"]),
    st.sampled_from(["a", "b", "c", "pf-1"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ROW, max_size=12))
def test_the_warned_rows_are_those_sharing_recipient_amount_and_currency(
    rows: list[tuple[str, str, int, str, str]],
) -> None:
    frame = pd.DataFrame(
        {
            "paymentType": [r[0] for r in rows],
            "requisites": [r[1] for r in rows],
            CENTS: np.array([r[2] for r in rows], dtype=np.int64),
            "currency": [r[3] for r in rows],
            "externalId": [r[4] for r in rows],
        },
        index=range(2, 2 + len(rows)),
    )

    # The plain definition: the same canonical recipient (an SBP mobile as 7 and its last ten
    # digits), amount and currency as another row, under more than one externalId among them.
    def key(r: tuple[str, str, int, str, str]) -> tuple[str, int, str]:
        mobile = r[0] == "SBP" and re.fullmatch("[78]?9[0-9]{9}", r[1])
        return ("7" + r[1][-10:] if mobile else r[1], r[2], r[3])

    expected = sorted(
        number
        for number, r in enumerate(rows, start=2)
        if len({o[4] for o in rows if key(o) == key(r)}) > 1
    )
    assert sorted(p.row for p in _double_payments(frame)) == expected


def test_rows_whose_keys_only_share_a_hash_are_kept_for_the_exact_test() -> None:
    texts = np.array(["a", "b", "a", "c"], dtype=object)
    numbers = np.array([1, 1, 1, 2], dtype=np.int64)
    more = np.array(["RUB"] * 4, dtype=object)
    assert _keys_may_repeat(texts, numbers, more).tolist() == [True, False, True, False]
    assert _keys_may_repeat(texts[:0], numbers[:0], more[:0]).tolist() == []
