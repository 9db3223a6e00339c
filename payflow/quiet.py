"""Keep Prefect's machinery out of the operator's sight, before Prefect is imported.

The settings are the ones measured in ../shared/prefect-notes.md: without them the temporary
server prints 'database is locked', loses task-run history and shows shutdown tracebacks.
Every value is a default: an operator's own PREFECT_* environment wins.
"""

from __future__ import annotations

import logging
import os
from importlib import resources
from pathlib import Path

from payflow.file_access import FileAccess, describe_owner, ensure_file, make_folder

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def prefect_environment(home: Path) -> dict[str, str]:
    """The PREFECT_* defaults payflow runs with, for `home` (PAYFLOW_HOME)."""
    logging_yml = resources.files("payflow").joinpath("prefect_logging.yml")
    return {
        "PREFECT_HOME": str((home / "prefect").resolve()),
        "PREFECT_LOGGING_SETTINGS_PATH": str(logging_yml),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
        "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "200",
        "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_READ_BATCH_SIZE": "100",
        "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL": "1",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "PREFECT_TASKS_RUNNER_THREAD_POOL_MAX_WORKERS": "8",
        "PREFECT_UI_ENABLED": "false",
    }


def quiet_prefect(home: Path, access: FileAccess | None = None) -> None:
    """Set payflow's Prefect defaults in this process (and so in the temporary server it starts);
    PAYFLOW_HOME and Prefect's home under it are made with `access`'s folder mode."""
    usable_home(home)
    for key, value in prefect_environment(home).items():
        os.environ.setdefault(key, value)
    ours = os.environ["PREFECT_HOME"] == prefect_environment(home)["PREFECT_HOME"]
    try:
        make_folder(home, access)
        if ours:
            make_folder(Path(os.environ["PREFECT_HOME"]), access)
    except PermissionError as exc:
        raise _home_refused(Path(exc.filename or home), "(its folder is not writable)") from None


def usable_home(home: Path) -> None:
    """A ConfigurationError naming PAYFLOW_HOME when this OS user cannot write there (another
    person's home): Prefect's profile and the log failed with a traceback."""
    places = (home, home / "prefect", home / "prefect" / "profiles.toml", home / "logs")
    for path in (*places, home / "logs" / "payflow.log"):
        try:
            if not path.exists():
                continue
            wanted = os.R_OK | os.W_OK | (os.X_OK if path.is_dir() else 0)
            if os.access(path, wanted):
                continue
            owner = describe_owner(path)
        except PermissionError:
            owner = "not readable"
        raise _home_refused(path, f"({owner})")


def _home_refused(path: Path, why: str) -> Exception:
    from payflow.runtime import ConfigurationError

    return ConfigurationError(
        f"PAYFLOW_HOME: this OS user cannot write {path} {why}: give each person their own "
        "PAYFLOW_HOME, and share the ledger through PAYFLOW_LEDGER_URL with "
        "PAYFLOW_SHARED_GROUP or PostgreSQL (see docs/multi-user.md)"
    )


def log_to_file(home: Path) -> Path:
    """Send every log record (payflow's and the libraries') to a file under `home/logs`."""
    path = ensure_file(make_folder(home / "logs") / "payflow.log")
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    logging.getLogger("payflow").setLevel(logging.INFO)
    # httpx logs every request URL at INFO; URLs carry externalIds but never the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return path
