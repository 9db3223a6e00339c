"""A process's end without the interpreter's collector passes over every object still alive.

At exit CPython clears each module and runs full garbage collections over what is left: with
Prefect, pandas and SQLAlchemy loaded (about 230,000 objects) that was half a second of CPU at
the end of every command and flow-run process, after its work was done. Here the garbage of the
run is collected once, with its finalisers, as at any collection; what is still alive then is
frozen, so the passes at exit skip it. Nothing a process writes waits for those passes: the
ledger commits, reports are written whole and closed, and atexit handlers (Prefect's log and
event workers, logging's flush) run as before.

Not while a thread of unknown work is still alive: the exit, half a second shorter, then often
reached the C library's teardown (OpenSSL's among it) while such a thread was inside it, making
an HTTP client, and the process died of a segmentation fault after its work was done. Then the
objects frozen earlier (`collecting.settle` at start-up) are unfrozen and the exit takes its
full time, as before, and such a thread parks at the interpreter's lock.
"""

from __future__ import annotations

import atexit
import gc
import threading

from payflow import collecting

# Prefect's event-loop threads: still alive at every exit of a process that used Prefect, idle
# in their loop's wait once Prefect's own exit handlers have drained its log and event workers.
IDLE_AT_EXIT = frozenset({"GlobalEventLoopThread", "RunSyncEventLoopThread"})

_registered = False


def skip_exit_collections() -> None:
    """At exit, freeze the objects alive (after one collection), once per process; unfreeze
    instead while another thread may still be at work (see the module's doc)."""
    global _registered
    if not _registered:
        _registered = True
        # atexit runs its handlers last in, first out: registered early, this runs after the
        # handlers registered later (Prefect's, the temporary server's stop).
        atexit.register(_at_exit)


def others_at_work() -> list[str]:
    """The names of the threads alive besides this one and Prefect's idle event loops."""
    here = threading.current_thread()
    return [
        thread.name
        for thread in threading.enumerate()
        if thread is not here and thread.is_alive() and thread.name not in IDLE_AT_EXIT
    ]


def _at_exit() -> None:
    if others_at_work():
        gc.unfreeze()
    else:
        collecting.settle()
