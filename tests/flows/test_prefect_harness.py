"""The test process's Prefect server records a module's task runs even after flows in the same
process ran against another server, as the console tests' in-process pay runs do, and the
flows that run after it against that other server are recorded there."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

from prefect import flow, task
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings
from support.prefect import prefect_harness, recorded_tries
from support.servers import free_port


@task
def one() -> int:
    return 1


@flow
def one_task() -> UUID:
    task_run_id = one(return_state=True).state_details.task_run_id
    assert task_run_id is not None
    return task_run_id


def test_task_runs_reach_the_harness_after_flows_ran_against_another_server_and_back(
    prefect_server: str, tmp_path: Path
):
    elsewhere = SubprocessASGIServer(port=free_port())
    with temporary_settings({PREFECT_HOME: tmp_path}):  # its database, not the user's
        elsewhere.start(timeout=120)
    try:
        with temporary_settings({PREFECT_API_URL: elsewhere.api_url}):
            one_task()
        with prefect_harness(prefect_server):
            task_run_id = one_task()
            # Without a fresh events worker the run was never recorded here.
            assert recorded_tries(task_run_id, timeout=60) == 1
        with temporary_settings({PREFECT_API_URL: elsewhere.api_url}):
            # Flows after the harness (the next module's) are recorded on their server again.
            assert recorded_tries(one_task(), timeout=60) == 1
    finally:
        elsewhere.stop()
