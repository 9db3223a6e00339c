"""Read-only tasks are retried by Prefect for transient API errors only."""

from __future__ import annotations

import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.testing.utilities import prefect_test_harness

from payflow.api.errors import RejectedError, ServerError
from payflow.tasks.retrying import transient_only


@pytest.fixture(scope="module")
def prefect_api():
    with prefect_test_harness(server_startup_timeout=90):
        yield


def _flaky(error: Exception, failures: int) -> tuple[object, list[int]]:
    calls: list[int] = []

    @task(
        retries=2, retry_delay_seconds=0, retry_condition_fn=transient_only, cache_policy=NO_CACHE
    )
    def read() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise error
        return "ok"

    @flow
    def run() -> str:
        return read()

    return run, calls


def test_a_transient_error_is_retried(prefect_api):
    run, calls = _flaky(ServerError("503 from the API", status_code=503), failures=1)
    assert run() == "ok"
    assert len(calls) == 2


def test_a_rejected_request_is_not_retried(prefect_api):
    run, calls = _flaky(RejectedError("400: bad request", status_code=400), failures=1)
    with pytest.raises(RejectedError):
        run()
    assert len(calls) == 1
