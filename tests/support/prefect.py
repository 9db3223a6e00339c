"""Prefect's test harness for one test module, starting from a fresh events worker."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.events.worker import EventsWorker
from prefect.exceptions import ObjectNotFound
from prefect.settings import get_current_settings, temporary_settings
from prefect.testing.utilities import prefect_test_harness


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


def task_run_count(task_run_id: UUID) -> int:
    """How many tries the current Prefect server has recorded for a task run; 0 before the run
    itself is recorded (task runs arrive through Prefect's batched events a moment later)."""
    with get_client(sync_client=True) as client:
        try:
            return client.read_task_run(task_run_id).run_count
        except ObjectNotFound:
            return 0
