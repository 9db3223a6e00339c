"""The `payflow` command line: `main` wraps the typer app so no traceback reaches an operator."""

from __future__ import annotations

import importlib
import logging
import sys

from pydantic import ValidationError

from payflow.cli.app import CommandError, app
from payflow.quiet import log_to_file, quiet_prefect
from payflow.settings import Settings

# Each module registers its commands on `app` when imported.
COMMAND_MODULES = (
    "validate",
    "run",
    "status",
    "reconcile",
    "refund",
    "links",
    "sandbox",
    "webhooks",
    "template",
    "rerun",
    "approve",
    "console",
)


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            importlib.import_module(f"payflow.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"payflow.cli.{name}":
                raise


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `payflow` console script."""
    try:
        home = Settings().home
    except ValidationError:
        home = Settings.model_fields["home"].default  # the command reports the bad setting
    # Before any command module imports Prefect: its logging is configured once, at import.
    quiet_prefect(home)
    _register_commands()
    try:
        app(args=argv, standalone_mode=True)
    except CommandError as exc:
        print(f"payflow: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        print("payflow: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except Exception as exc:
        # A bug or a surprise: the operator gets one line, the log file gets the traceback.
        log = log_to_file(home)
        logging.getLogger("payflow").exception("unexpected error")
        print(
            f"payflow: unexpected error ({type(exc).__name__}); details in {log}",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
