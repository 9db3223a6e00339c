"""Pauses of the cyclic collector (nested, overlapping in threads, ended by an error) and the
settling after a start-up: a command's, and the temporary Prefect server's."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from payflow import collecting
from payflow.prefect_server import _LAUNCHER


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


# Garbage in a reference cycle, whose finaliser says so: only a collection frees a cycle.
SETTLED = """
import gc
from payflow import collecting
class Holder:
    def __del__(self):
        print("finalised")
holder = Holder()
holder.me = holder
del holder
collecting.settle()
print("frozen" if gc.get_freeze_count() else "not frozen", gc.isenabled())
"""
# A command's start-up: its module imported with the collector paused, then settled.
COMMAND = """
import gc, sys
import payflow.cli as cli
seen = []
imported = cli._import_command
def recorded(module):
    seen.append(gc.isenabled())
    return imported(module)
cli._import_command = recorded
sys.argv = ["payflow", "whoami"]
try:
    cli.main()
except SystemExit:
    pass
print(seen, gc.isenabled(), "frozen" if gc.get_freeze_count() else "not frozen")
gc.unfreeze()
try:
    cli.main(["whoami"])  # a call from a test or a tool freezes none of its objects
except SystemExit:
    pass
print(seen, gc.isenabled(), "frozen" if gc.get_freeze_count() else "not frozen")
"""


def _python(program: str, *args: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", program, *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_settling_finalises_the_garbage_then_freezes_what_lives_on() -> None:
    assert _python(SETTLED) == ["finalised", "frozen True"]


def test_a_commands_start_up_imports_paused_then_settled(tmp_path: Path) -> None:
    env = {**os.environ, "PAYFLOW_HOME": str(tmp_path)}
    said = [line for line in _python(COMMAND, env=env) if line.startswith("[")]
    assert said == [
        "[False] True frozen",
        "[False, False] True not frozen",
    ]


def test_the_temporary_prefect_server_starts_with_its_server_package_settled(
    tmp_path: Path,
) -> None:
    # A stand-in for uvicorn's `python -m uvicorn`: what the launcher left when it hands over.
    fake = tmp_path / "uvicorn"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(
        "import gc, sys\n"
        "print(gc.isenabled(), bool(gc.get_freeze_count()),"
        " 'prefect.server.api.server' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    assert _python(_LAUNCHER, str(os.getpid()), env=env) == ["True True True"]
