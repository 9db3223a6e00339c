"""A fresh Prefect database for a test server, without running Prefect's migrations each time.

A Prefect server on an empty SQLite file first runs every one of Prefect's migrations: about
4 of the 8 CPU seconds of its start-up, paid by each test process's server (`prefect_server`)
and by the CLI tests' server (`shared_prefect_server`). The test run migrates one template once,
under a lock its pytest-xdist workers share, and each server starts on a copy: a database as
empty as a new one, already at Prefect's newest migration, so the server skips them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest


def _run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of this test run: shared by its pytest-xdist workers, whose own temporary
    folders are inside it; a run without workers has its own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _migrate(database: Path, home: Path) -> None:
    """`prefect server database upgrade` on a new SQLite file at `database`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PAYFLOW_"))}
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_DATABASE_CONNECTION_URL=f"sqlite+aiosqlite:///{database}",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
    )
    prefect = str(Path(sys.executable).with_name("prefect"))
    done = subprocess.run(
        [prefect, "server", "database", "upgrade", "-y"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"Prefect's migrations failed:\n{done.stdout}\n{done.stderr}"


def fresh_prefect_database(target: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Write at `target` an empty Prefect SQLite database at the newest migration: a copy of the
    template this test run migrated once (for the installed Prefect version)."""
    root = _run_root(tmp_path_factory)
    template = root / f"prefect-{version('prefect')}-template.db"
    with (root / "prefect-template.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker migrates; the others wait, then copy
        if not template.exists():
            partial = root / "prefect-template.partial.db"
            partial.unlink(missing_ok=True)
            _migrate(partial, root / "prefect-template-home")
            partial.rename(template)  # complete or absent: a failed migration leaves none
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, target)
