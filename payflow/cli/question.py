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


def piped_line() -> str | None:
    """The first line of a standard input that is no terminal (`echo y | payflow run`), read
    only when it is there now: None at its end, or when nothing was piped (never a wait)."""
    import select

    try:
        ready, _, _ = select.select([sys.stdin], [], [], 0)
    except (OSError, ValueError):  # no real file behind sys.stdin
        return None
    line = sys.stdin.readline() if ready else ""
    return line.strip() if line else None


def piped_answer(question: str, line: str) -> bool:
    """The piped `line` as the answer to `question`: `y` or `yes` (any case) for yes; both are
    echoed on stderr, as a terminal shows them."""
    print(f"{question} [y/N]: {line} (read from standard input)", file=sys.stderr)
    return line.lower() in ("y", "yes")


def signal_exit_code() -> int:
    """The exit of a command stopped by `STOP`'s signal: 130 for SIGINT, 143 for SIGTERM."""
    return EXIT_ON_SIGNAL.get(STOP.signal_name, 143)
