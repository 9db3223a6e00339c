"""PAYFLOW_RUN_STALE_AFTER: the heartbeats' window, one setting that the watchdog judging runs
and the runs beating read alike; a window too short to hold a late beat is refused in one line."""

from __future__ import annotations

from datetime import timedelta

import pytest
from paying_support import register, row
from pydantic import ValidationError
from support.beats import at_past

from payflow.cli.setup import settings_error
from payflow.ledger import Ledger
from payflow.ledger.run_beats import batch_beats, beat
from payflow.paying.heartbeat import beating
from payflow.settings import Settings
from payflow.watchdog import Verdict, run_watchdog

ELSEWHERE = "worker-7.example:4242:cafe0001"  # another host's run: alive as long as it beats


@pytest.fixture
def ledger(tmp_path) -> Ledger:
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as opened:
        yield opened


def test_the_window_defaults_to_a_minute_and_runs_beat_six_times_in_it() -> None:
    default = Settings(_env_file=None)
    assert default.run_stale_window == timedelta(minutes=1)
    assert default.run_beat_seconds == 10
    short = Settings(_env_file=None, run_stale_after=15)
    assert short.run_stale_window == timedelta(seconds=15)
    assert short.run_beat_seconds == 2.5


@pytest.mark.parametrize("value", ["9.9", "0", "-60", "nan"])
def test_a_window_below_the_floor_is_refused_in_one_line(monkeypatch, value) -> None:
    monkeypatch.setenv("PAYFLOW_RUN_STALE_AFTER", value)
    with pytest.raises(ValidationError) as refused:
        Settings(_env_file=None)
    line = settings_error(refused.value)
    assert line.startswith(f"bad setting PAYFLOW_RUN_STALE_AFTER: {float(value):g} s is too short")
    assert "at least 10" in line and "\n" not in line


def test_the_watchdog_judges_a_silent_run_by_the_settings_window(ledger, tmp_path) -> None:
    """A run of a 15 s window last heard 20 s ago on another host: alive to a watchdog of the
    default minute, dead to one of 15 s (reported for `payflow pay`, with no Prefect server
    here)."""
    batch_id = register(ledger, [row("rw-1", 2)])
    beat(at_past(ledger, 20), ELSEWHERE, batch_id, "flow run quiet-owl", timedelta(seconds=15))
    assert ledger.claim_for_submit(batch_id, ELSEWHERE, 1)
    home = {"home": tmp_path, "_env_file": None}

    assert run_watchdog(Settings(**home), ledger, with_prefect=False) == []
    short = Settings(**home, run_stale_after=15)
    [watched] = run_watchdog(short, ledger, with_prefect=False)
    assert watched.batch_id == batch_id and watched.verdict is Verdict.NEEDS_PAY


def test_a_run_of_a_longer_window_is_not_judged_by_a_shorter_one(ledger, tmp_path) -> None:
    """A worker of the default minute, last heard 20 s ago: a watchdog set to 15 s waits the
    run's own minute, so it does not take a live run for a dead one; 61 s of silence is death."""
    home = {"home": tmp_path, "_env_file": None, "run_stale_after": 15}
    batch_id = register(ledger, [row("rw-2", 2)])
    beat(at_past(ledger, 20), ELSEWHERE, batch_id, "flow run slow-owl", timedelta(minutes=1))
    assert ledger.claim_for_submit(batch_id, ELSEWHERE, 1)
    assert run_watchdog(Settings(**home), ledger, with_prefect=False) == []

    beat(at_past(ledger, 61), ELSEWHERE, batch_id, "flow run slow-owl", timedelta(minutes=1))
    [watched] = run_watchdog(Settings(**home), ledger, with_prefect=False)
    assert watched.batch_id == batch_id and watched.verdict is Verdict.NEEDS_PAY


def test_a_beating_run_records_the_window_its_beats_keep(ledger) -> None:
    batch_id = register(ledger, [row("rw-3", 2)])
    with beating(ledger, batch_id, "flow run brisk-owl", every=2.5):
        [held] = batch_beats(ledger, batch_id)
    assert held.window == timedelta(seconds=15)
