"""The transitions table on its own: allowed, stale and illegal moves."""

from __future__ import annotations

import pytest

from payflow.ledger.states import (
    FINAL_STATUSES,
    TRANSITIONS,
    IllegalTransition,
    Move,
    RowState,
    check_move,
    parse_api_status,
)

S = RowState
ALLOWED = sorted((a, b) for a, targets in TRANSITIONS.items() for b in targets)


@pytest.mark.parametrize(("current", "new"), ALLOWED)
def test_every_allowed_move_applies(current: RowState, new: RowState) -> None:
    assert check_move("x", current, new) is Move.APPLY


def test_the_table_holds_the_documented_moves() -> None:
    assert TRANSITIONS[S.VALIDATED] == {S.SUBMITTING, S.HELD, S.SUBMIT_REJECTED}
    assert TRANSITIONS[S.HELD] == {S.VALIDATED}  # only an operator's --allow-repeat
    assert TRANSITIONS[S.SUBMITTING] == {
        S.CREATED, S.PROCESSING, S.SUBMIT_REJECTED, S.CONFLICT, S.VALIDATED, *FINAL_STATUSES
    }  # fmt: skip
    assert TRANSITIONS[S.CREATED] == {S.PROCESSING, *FINAL_STATUSES}
    assert TRANSITIONS[S.PROCESSING] == FINAL_STATUSES
    assert TRANSITIONS[S.COMPLETED] == {S.FAILED}
    for final in (S.FAILED, S.CANCELED, S.EXPIRED, S.REJECTED, S.CONFLICT, S.SUBMIT_REJECTED):
        assert final not in TRANSITIONS


@pytest.mark.parametrize(
    ("current", "new"),
    [
        (S.PROCESSING, S.CREATED),
        (S.COMPLETED, S.PROCESSING),
        (S.COMPLETED, S.CREATED),
        (S.FAILED, S.PROCESSING),
        (S.EXPIRED, S.CREATED),
        (S.CREATED, S.SUBMITTING),
        (S.PROCESSING, S.VALIDATED),
        *[(state, state) for state in RowState],
    ],
)
def test_equal_or_older_statuses_are_stale(current: RowState, new: RowState) -> None:
    assert check_move("x", current, new) is Move.STALE


@pytest.mark.parametrize(
    ("current", "new"),
    [
        (S.VALIDATED, S.CREATED),
        (S.VALIDATED, S.COMPLETED),
        (S.FAILED, S.COMPLETED),
        (S.CANCELED, S.COMPLETED),
        (S.EXPIRED, S.FAILED),
        (S.COMPLETED, S.CANCELED),
        (S.SUBMIT_REJECTED, S.CREATED),
        (S.CONFLICT, S.SUBMITTING),
        (S.REJECTED, S.VALIDATED),
        (S.CREATED, S.SUBMIT_REJECTED),
        (S.PROCESSING, S.CONFLICT),
        (S.HELD, S.SUBMITTING),
        (S.HELD, S.CREATED),
    ],
)
def test_moves_nobody_allowed_raise(current: RowState, new: RowState) -> None:
    with pytest.raises(IllegalTransition, match=f"{current} -> {new}") as caught:
        check_move("ext-1", current, new)
    assert caught.value.external_id == "ext-1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("COMPLETED", S.COMPLETED), (" processing ", S.PROCESSING), ("Canceled", S.CANCELED),
     ("CANCELLED", None), ("SUBMITTING", None), ("VALIDATED", None), ("", None)],
)  # fmt: skip
def test_only_service_statuses_parse(text: str, expected: RowState | None) -> None:
    assert parse_api_status(text) is expected
