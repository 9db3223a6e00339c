"""Prefect's test harness for one test module, starting from a fresh events worker, and what
its server recorded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import TaskRun
from prefect.events.worker import EventsWorker
from prefect.exceptions import ObjectNotFound
from prefect.settings import get_current_settings, temporary_settings
from prefect.testing.utilities import prefect_test_harness

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
