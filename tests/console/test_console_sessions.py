"""Console sessions end when idle and are bounded in number: they were kept until the console
restarted, so a forgotten signed-in browser could approve payouts a day later, and each
anonymous GET /login grew the console's memory for good."""

from __future__ import annotations

import pytest

from payflow.console import sessions as sessions_module
from payflow.console.operators import Operator
from payflow.console.sessions import ANONYMOUS_IDLE_SECONDS, IDLE_SECONDS, Sessions


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


CARL = Operator("carl", "checker")


def test_a_signed_in_session_ends_after_an_idle_hour_and_each_request_keeps_it() -> None:
    clock = Clock()
    sessions = Sessions(clock)
    session_id, _ = sessions.new(CARL)
    clock.now += IDLE_SECONDS - 1
    assert sessions.get(session_id) is not None  # seen now: the hour starts again
    clock.now += IDLE_SECONDS - 1
    assert sessions.get(session_id) is not None
    clock.now += IDLE_SECONDS + 1
    assert sessions.get(session_id) is None
    assert sessions.get(session_id) is None and len(sessions) == 0


def test_a_sign_in_form_left_unused_ends_sooner() -> None:
    clock = Clock()
    sessions = Sessions(clock)
    session_id, _ = sessions.new()
    clock.now += ANONYMOUS_IDLE_SECONDS + 1
    assert sessions.get(session_id) is None


def test_anonymous_sessions_make_room_before_a_signed_in_one_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sessions_module, "MAX_SESSIONS", 50)
    clock = Clock()
    sessions = Sessions(clock)
    signed_in, _ = sessions.new(CARL)
    for _ in range(500):  # a script asking GET /login again and again
        sessions.new()
        clock.now += 0.1
    assert len(sessions) == 50
    assert sessions.get(signed_in) is not None
