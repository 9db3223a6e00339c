"""Prefect servers for tests (Prefect's harness from a fresh events worker, or a server on
PostgreSQL in its own process), and what a server recorded."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import TaskRun
from prefect.events.worker import EventsWorker
from prefect.exceptions import ObjectNotFound
from prefect.settings import get_current_settings, temporary_settings
from prefect.testing.utilities import prefect_test_harness

from support.postgres import fresh_postgres_database
from support.servers import answers, free_port, start_group, stop_group
from support.waiting import wait_until


@contextmanager
def prefect_harness(settings: dict[Any, Any] | None = None) -> Iterator[str]:
    """A temporary Prefect server for in-process flows, with `settings` applied; its API URL.

    Prefect keeps one events worker per process for any API URL. One started by an earlier test
    against another server kept sending there, and this server's task runs were never recorded:
    it is stopped first, so the next event starts one bound here."""
    EventsWorker.drain_all(timeout=30)
    harness = prefect_test_harness(server_startup_timeout=90)
    with temporary_settings(updates=settings or {}), harness:
        yield str(get_current_settings().api.url)


@contextmanager
def prefect_server_on_postgres(root: Path, **settings: str) -> Iterator[str]:
    """`prefect server start` on a fresh PostgreSQL database, in its own process; its API URL.

    For tests whose server is busy for minutes with workers and long runs: Prefect's harness
    keeps its database in SQLite, which on a loaded machine answered "database is locked" (a
    503) and the worker reported a waiting run CRASHED. `settings` are more PREFECT_* variables;
    the log is `root/prefect-server.log`."""
    import asyncpg  # noqa: F401  (the server's PostgreSQL driver must be installed)

    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PAYFLOW_"))}
    with fresh_postgres_database("prefect_test") as database:
        env.update(
            PREFECT_HOME=str(root / "prefect-server-home"),
            PREFECT_API_DATABASE_CONNECTION_URL=database.replace("+psycopg", "+asyncpg"),
            PREFECT_SERVER_ANALYTICS_ENABLED="false",
            PREFECT_UI_ENABLED="false",
            **settings,
        )
        prefect = str(Path(sys.executable).with_name("prefect"))
        command = [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)]
        server = start_group(command, env, root / "prefect-server.log")
        try:
            wait_until(
                lambda: answers(f"{url}/health") or server.poll() is not None,
                what=f"the Prefect server (log: {root / 'prefect-server.log'})",
                timeout=180,
                interval=0.3,
            )
            assert server.poll() is None, f"the Prefect server ended; see {root}/prefect-server.log"
            yield url
        finally:
            stop_group(server)


def recorded_tries(task_run_id: UUID, *, timeout: float = 30) -> int:
    """How many tries the current Prefect server recorded for a task run, read once it holds the
    run's final state: task runs arrive through Prefect's batched events after the flow returns,
    and an earlier read can see the first try only."""

    def final_run() -> TaskRun | None:
        with get_client(sync_client=True) as client:
            try:
                run = client.read_task_run(task_run_id)
            except ObjectNotFound:
                return None  # not recorded yet
        return run if run.state is not None and run.state.is_final() else None

    run = wait_until(final_run, what="the task run's final state on the server", timeout=timeout)
    return run.run_count
