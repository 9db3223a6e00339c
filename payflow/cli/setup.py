"""What every command does first: settings, quiet Prefect, logs to a file."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError
from pydantic_settings import SettingsError

from payflow.cli.app import fail
from payflow.opening import UnreadableFile, UnwritablePath, check_file, check_out_folder
from payflow.quiet import log_to_file, quiet_prefect
from payflow.settings import Settings
from payflow.wording import api_trouble

if TYPE_CHECKING:
    from payflow.reconcile import FailureClasses


def settings_error(exc: ValidationError) -> str:
    """One line naming the first bad PAYFLOW_* setting."""
    first = exc.errors()[0]
    name = "PAYFLOW_" + "_".join(str(p) for p in first["loc"]).upper()
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"bad setting {name}: {message}"


def unparsed_setting(exc: SettingsError) -> str:
    """One line naming a PAYFLOW_* setting whose JSON value cannot be parsed."""
    field = re.search(r'field "([^"]+)"', str(exc))
    name = "PAYFLOW_" + field.group(1).upper() if field else "a PAYFLOW_* setting"
    why = f" ({exc.__cause__})" if exc.__cause__ else ""
    return f"bad setting {name}: not valid JSON{why}"


def readable_file(path: Path) -> None:
    """Stop at once, in the reader's words, when `path` is no file to read (missing, a folder, a
    named pipe, not readable): before a Prefect server, the sandbox or any import starts
    (`payflow run` took 15 s to say a file was missing). The reader still checks, as the file
    can go in between."""
    try:
        check_file(path)
    except UnreadableFile as exc:
        fail(str(exc))


def writable_folder(path: Path | None) -> None:
    """Stop at once when `--out` cannot take a report, before anything is sent: a run paid its
    rows and only then ended in "unexpected error" on a folder it could not write."""
    if path is None:
        return
    try:
        check_out_folder(path)
    except UnwritablePath as exc:
        fail(str(exc))


def load_settings() -> Settings:
    """The settings; a bad one ends the command with one line naming it."""
    try:
        return Settings()
    except ValidationError as exc:
        fail(settings_error(exc))
    except SettingsError as exc:  # a JSON setting pydantic-settings could not even parse
        fail(unparsed_setting(exc))


def prepare() -> Settings:
    """Load settings (a bad one is a one-line error) and route all logging to the log file."""
    settings = load_settings()
    quiet_prefect(settings.home)
    log_to_file(settings.home)
    return settings


def failure_classes(settings: Settings) -> FailureClasses:
    """The failure-class table a report groups unpaid rows by, or one line saying what is wrong
    with the operator's file."""
    # Here, not at the top: payflow.reconcile loads the API client (httpx), which the commands
    # that only read the ledger (policy, batches) do without.
    from payflow.reconcile import FailureClasses, FailureTableError

    try:
        return FailureClasses.load(settings.failure_classes_path)
    except FailureTableError as exc:
        fail(f"failure classes: {exc}")


def listening_socket(host: str, port: int) -> socket.socket:
    """A server's listening socket, bound before anything is said or started (uvicorn serves it:
    `server.run(sockets=[...])`); one line when the address is taken. Left to uvicorn, a busy
    port printed 'listening on', uvicorn's own ERROR line and then ours."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=128)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        fail(f"cannot listen on {host}:{port}: {reason.lower()}")


def check_bound_service(settings: Settings) -> None:
    """Refuse in one line a ledger bound to another service or merchant than the settings name,
    for a command that serves pages or claims before any run would check it."""
    from payflow.api.errors import PaymentsApiError
    from payflow.connections import check_service_binding  # the API client's imports: here

    try:
        check_service_binding(settings, settings.uses_sandbox)
    except PaymentsApiError as exc:
        fail(api_trouble(exc, then="nothing started"))
