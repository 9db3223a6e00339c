"""The operator's yes-or-no question before a command sends anything, and how a signal ends it."""

from __future__ import annotations

import sys

import typer

from payflow.stopping import STOP, signals_end_the_question

EXIT_ON_SIGNAL = {"SIGINT": 130, "SIGTERM": 143}


def ask(question: str) -> bool:
    """The operator's answer on stderr (no by default). A SIGTERM or SIGINT while it waits
    returns False with `STOP` set: the caller says in one line what was stopped and exits
    `signal_exit_code()`."""
    try:
        with signals_end_the_question():
            return typer.confirm(question, default=False, err=True)
    except typer.Abort:  # typer's word for a KeyboardInterrupt (or end of input) in the read
        if STOP.requested():
            print(file=sys.stderr)  # the stop line starts below the question, not after it
            return False
        raise


def signal_exit_code() -> int:
    """The exit of a command stopped by `STOP`'s signal: 130 for SIGINT, 143 for SIGTERM."""
    return EXIT_ON_SIGNAL.get(STOP.signal_name, 143)
