"""Pauses of the cyclic collector: nested, overlapping in threads, ended by an error."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from payflow import collecting


@pytest.fixture(autouse=True)
def _collector_back_on() -> Iterator[None]:
    yield
    gc.enable()


def test_a_pause_ends_with_the_collector_running_again() -> None:
    with collecting.paused():
        assert not gc.isenabled()
        with collecting.paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the outer pause is still open"
    assert gc.isenabled()


def test_an_error_in_a_pause_still_ends_it() -> None:
    with pytest.raises(ZeroDivisionError), collecting.paused():
        _ = 1 / 0
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    with collecting.paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads_resume_once_the_last_ends() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with collecting.paused():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with collecting.paused():
        thread.start()
        assert entered.wait(10)
    assert not gc.isenabled(), "the other thread's pause is still open"
    release.set()
    thread.join(10)
    assert gc.isenabled()
