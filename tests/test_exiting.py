"""A process's end skips the collector's passes over what is alive, and loses nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# A handler registered before `skip_exit_collections` runs after its handler (atexit is last
# in, first out) and prints whether the objects alive were frozen.
SAYS_FROZEN = (
    "import atexit, gc\n"
    "atexit.register(lambda: print('frozen' if gc.get_freeze_count() else 'not frozen'))\n"
)
# Garbage in a reference cycle, whose finaliser writes a file: reference counting never frees a
# cycle, so only a collection runs it. Frozen without that collection, it never ran.
CYCLE = """
import sys
from payflow.exiting import skip_exit_collections
skip_exit_collections()
skip_exit_collections()  # once per process, however often asked
class Holder:
    def __del__(self):
        with open(sys.argv[1], "w", encoding="utf-8") as handle:
            handle.write("finalised")
holder = Holder()
holder.me = holder
del holder
"""
HELP = """
from payflow.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
"""


def _run(program: str, *args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", SAYS_FROZEN + program, *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_garbage_is_finalised_at_exit_and_what_is_alive_is_frozen(tmp_path: Path) -> None:
    target = tmp_path / "finalised.txt"
    assert _run(CYCLE, str(target)) == ["frozen"]
    assert target.read_text(encoding="utf-8") == "finalised"


def test_a_command_and_a_flow_run_process_end_that_way() -> None:
    assert _run(HELP)[-1] == "frozen"
    # A worker's flow-run process loads its entrypoint by path, as Prefect does; this one
    # imports no payflow.flows module.
    watchdog = "from prefect.flows import load_flow_from_entrypoint\n"
    watchdog += f"load_flow_from_entrypoint({str(REPO / 'flows/watchdog.py:watchdog')!r})\n"
    assert _run(watchdog) == ["frozen"]


# A command's start-up froze what it imported (`collecting.settle`); a thread of its own is
# still at work when it exits.
STILL_WORKING = """
import threading
from payflow import collecting
from payflow.exiting import skip_exit_collections
skip_exit_collections()
collecting.settle()
threading.Thread(target=threading.Event().wait, daemon=True, name="still-working").start()
"""


def test_a_process_exiting_with_a_thread_still_at_work_unfreezes_and_takes_its_full_exit() -> None:
    # A shorter exit reached OpenSSL's teardown while such a thread was inside it (making an
    # HTTP client): a segmentation fault after the work was done, about one exit in three.
    assert _run(STILL_WORKING) == ["not frozen"]
    assert _run(STILL_WORKING.replace("still-working", "GlobalEventLoopThread")) == ["frozen"]
