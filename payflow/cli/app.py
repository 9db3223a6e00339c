"""The typer application every command module registers on, and the one way to fail."""

from __future__ import annotations

from typing import NoReturn

import typer

app = typer.Typer(
    name="payflow",
    help="Bulk payouts: validate a batch, pay each row exactly once, track, reconcile.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: rich's help renderer costs a third of a second to import.
    rich_markup_mode=None,
)


class CommandError(Exception):
    """A failure to show the operator as one line, with the exit code to end with."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def fail(message: str, exit_code: int = 2) -> NoReturn:
    """Stop the command with a one-line message on stderr and no traceback."""
    raise CommandError(message, exit_code)


@app.callback()
def _root() -> None:
    # A callback keeps `app` a group of commands however few are loaded (see payflow.cli.main).
    pass
