"""Read-only tasks are retried by Prefect for transient API errors only."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from support.prefect import recorded_tries
from support.sandbox import MakeSandbox
from support.stats import sandbox_stats, set_faults

from payflow.api.errors import RejectedError, ServerError
from payflow.api.retry import RetryPolicy
from payflow.connections import RunTarget
from payflow.tasks.resolve_banks import load_services, resolve_banks
from payflow.tasks.retrying import transient_only

# Every attempt the client makes for one GET: the first Prefect try of a lookup fails as a whole.
FAILS_PAST_THE_CLIENT = RetryPolicy().max_retries + 1


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


def test_the_lookups_outlast_a_sandbox_that_fails_first(
    prefect_api, make_sandbox: MakeSandbox, tmp_path: Path
):
    sandbox = make_sandbox(fail_first=FAILS_PAST_THE_CLIENT)
    target = RunTarget(sandbox.url, f"sqlite:///{tmp_path / 'ledger.sqlite3'}", sandbox=True)

    @flow
    def lookups():
        # Only the delay is shortened: retries and the retry condition are the tasks' own.
        services = load_services.with_options(retry_delay_seconds=0)(target, return_state=True)
        set_faults(sandbox, fail_first=FAILS_PAST_THE_CLIENT)
        banks = resolve_banks.with_options(retry_delay_seconds=0)(
            target, ["79161234567"], return_state=True
        )
        return services, banks

    services, banks = lookups()
    assert services.result() and "79161234567" in banks.result()
    assert recorded_tries(services.state_details.task_run_id) == 2
    assert recorded_tries(banks.state_details.task_run_id) == 2
    assert sandbox_stats(sandbox)["bankLookups"] == 1


def test_a_refused_lookup_is_not_retried(prefect_api, make_sandbox: MakeSandbox, tmp_path: Path):
    sandbox = make_sandbox(token="another-token")
    target = RunTarget(sandbox.url, f"sqlite:///{tmp_path / 'ledger.sqlite3'}", sandbox=True)

    @flow
    def lookups():
        state = load_services.with_options(retry_delay_seconds=0)(target, return_state=True)
        return state.is_failed(), state.state_details.task_run_id

    failed, task_run_id = lookups()
    assert failed
    assert recorded_tries(task_run_id) == 1
