"""distinct_keys: rules judged once per distinct key must map back to every row exactly."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from payflow.schemas.text_checks import distinct_keys

TEXT = st.sampled_from(["", "SBP", "SIM", "RUB", "XOF", "201", "ё"])


@given(st.lists(st.tuples(TEXT, TEXT, TEXT), min_size=1, max_size=60))
def test_each_row_gets_back_its_own_key(rows: list[tuple[str, str, str]]) -> None:
    columns = [np.array([row[i] for row in rows], dtype=object) for i in range(3)]
    codes, keys = distinct_keys(*columns)
    assert [keys[code] for code in codes.tolist()] == rows
    assert len(keys) == len(set(rows))
