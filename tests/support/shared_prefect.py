"""One Prefect server per test process for tests that run the payflow command line.

A `payflow run` with no PREFECT_API_URL starts Prefect's temporary server, about 12 s of CPU
each time; the CLI tests run dozens of them. Most share one server, as an operator with a warm
server would (docs/performance.md); `cli_support.payflow_env` points the runs at it, and the tests
about the temporary server itself (the quiet sample run, signals) ask for one with
`temporary_prefect=True`. A test module outside tests/cli imports `shared_prefect_server`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from payflow.quiet import prefect_environment
from support.prefect_database import fresh_prefect_database
from support.servers import answers, free_port

# Set by `shared_prefect_server`: the address of this test process's Prefect server.
SHARED_PREFECT_VARIABLE = "CLI_TESTS_PREFECT_API_URL"


@pytest.fixture(scope="session", autouse=True)
def shared_prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start `prefect server start` once; payflow_env points the runs at it."""
    home = tmp_path_factory.mktemp("shared-prefect")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env.update(prefect_environment(home))
    # The server's database is PREFECT_HOME's prefect.db (Prefect's default).
    fresh_prefect_database(Path(env["PREFECT_HOME"]) / "prefect.db", tmp_path_factory)
    prefect = str(Path(sys.executable).with_name("prefect"))
    command = [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    url = f"http://127.0.0.1:{port}/api"
    log = (home / "server.log").open("w")
    server = subprocess.Popen(
        [*command, "--no-services"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 240
        while True:
            if answers(f"{url}/health"):
                break
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the shared Prefect server did not start; see {home / 'server.log'}")
            time.sleep(0.3)
        os.environ[SHARED_PREFECT_VARIABLE] = url
        yield url
    finally:
        os.environ.pop(SHARED_PREFECT_VARIABLE, None)
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
