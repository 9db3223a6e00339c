"""What every command does first: settings, quiet Prefect, logs to a file."""

from __future__ import annotations

from pydantic import ValidationError

from payflow.cli.app import fail
from payflow.quiet import log_to_file, quiet_prefect
from payflow.settings import Settings


def settings_error(exc: ValidationError) -> str:
    """One line naming the first bad PAYFLOW_* setting."""
    first = exc.errors()[0]
    name = "PAYFLOW_" + "_".join(str(p) for p in first["loc"]).upper()
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"bad setting {name}: {message}"


def prepare() -> Settings:
    """Load settings (a bad one is a one-line error) and route all logging to the log file."""
    try:
        settings = Settings()
    except ValidationError as exc:
        fail(settings_error(exc))
    quiet_prefect(settings.home)
    log_to_file(settings.home)
    return settings
