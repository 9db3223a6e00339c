"""Prefect servers for tests (the test process's harness server, entered from a fresh events
worker, or a server on PostgreSQL in its own process), and what a server recorded."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import TaskRun
from prefect.context import _temporary_global_settings_context, get_settings_context
from prefect.events.worker import EventsWorker
from prefect.exceptions import ObjectNotFound
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    PREFECT_HOME,
    PREFECT_SERVER_ANALYTICS_ENABLED,
    PREFECT_SERVER_DATABASE_CONNECTION_URL,
    temporary_settings,
)
from prefect.settings.legacy import Setting

from support.postgres import fresh_postgres_database
from support.servers import answers, free_port, start_group, stop_group
from support.waiting import wait_until

# The SQLite database of each harness server this process started, by API URL (`backdate_run`).
HARNESS_DATABASES: dict[str, Path] = {}


def start_harness_server(home: Path) -> SubprocessASGIServer:
    """The server Prefect's test harness starts (its temporary server, with the services that
    record task runs), on the SQLite database `home / "prefect.db"` (made by
    `support.prefect_database.fresh_prefect_database`, else Prefect creates and migrates it);
    started once per test process by the `prefect_server` fixture, as the harness cost about
    9 s of CPU per module."""
    server = SubprocessASGIServer(port=free_port())
    database = f"sqlite+aiosqlite:///{home / 'prefect.db'}"
    fresh = {
        PREFECT_HOME: home,
        PREFECT_SERVER_DATABASE_CONNECTION_URL: database,
        # Its telemetry job locked the database ("database is locked"), as in payflow's runs.
        PREFECT_SERVER_ANALYTICS_ENABLED: False,
    }
    with temporary_settings(updates=fresh):  # the server's environment, not the tests'
        server.start(timeout=90)
    HARNESS_DATABASES[server.api_url] = home / "prefect.db"
    return server


def backdate_run(api_url: str, run_id: str, seconds: float) -> None:
    """Make a flow run on the harness server at `api_url` look started `seconds` ago: Prefect
    sets a run's start time itself, and a run younger than a heartbeat window is never judged
    dead (`paying.heartbeat.left_behind`); waiting a minute per test is too slow."""
    import sqlite3
    from datetime import UTC, datetime, timedelta

    started = datetime.now(UTC) - timedelta(seconds=seconds)
    with sqlite3.connect(HARNESS_DATABASES[api_url], timeout=30) as database:
        database.execute(
            "UPDATE flow_run SET start_time = ? WHERE id = ?",
            (started.strftime("%Y-%m-%d %H:%M:%S.%f"), run_id),
        )


@contextmanager
def prefect_harness(api_url: str, more: Mapping[Setting, Any] | None = None) -> Iterator[str]:
    """In-process flows, and threads they start, run against the Prefect server at `api_url`
    (the `prefect_server` fixture's) until the block ends; yields `api_url`.

    Prefect keeps one events worker per process for any API URL. One started by an earlier test
    against another server kept sending there, and this server's task runs were never recorded:
    it is stopped first, so the next event starts one bound here, and stopped again at the end
    so that the next module's flows do not send here. `more`: other settings for the block.
    No flow-run heartbeats, as the tests' commands (`PAYFLOW_PREFECT_HEARTBEATS`): nothing
    reads them, and each flow's end waited up to a second for Prefect's heartbeat thread."""
    EventsWorker.drain_all(timeout=30)
    quiet = {PREFECT_API_URL: api_url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    with (
        temporary_settings(updates={**quiet, **(more or {})}),
        # A thread started inside sees Prefect's global settings, not this context's.
        _temporary_global_settings_context(get_settings_context()),
    ):
        try:
            yield api_url
        finally:
            EventsWorker.drain_all(timeout=30)


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
