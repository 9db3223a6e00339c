"""A process's end without the interpreter's collector passes over every object still alive.

At exit CPython clears each module and runs full garbage collections over what is left: with
Prefect, pandas and SQLAlchemy loaded (about 230,000 objects) that was half a second of CPU at
the end of every command and flow-run process, after its work was done. Here the garbage of the
run is collected once, with its finalisers, as at any collection; what is still alive then is
frozen, so the passes at exit skip it. Nothing a process writes waits for those passes: the
ledger commits, reports are written whole and closed, and atexit handlers (Prefect's log and
event workers, logging's flush) run as before.
"""

from __future__ import annotations

import atexit

from payflow import collecting

_registered = False


def skip_exit_collections() -> None:
    """Freeze the objects alive at exit (after one collection), once per process."""
    global _registered
    if not _registered:
        _registered = True
        # atexit runs its handlers last in, first out: registered early, this runs after the
        # handlers registered later (Prefect's, the temporary server's stop).
        atexit.register(collecting.settle)
