"""Fixtures shared by every test folder: a real sandbox server on 127.0.0.1.

Use `sandbox_server` for a started sandbox with fast delays, or `make_sandbox(**overrides)` to
start one (or several) with other settings. Overrides are `SandboxConfig` fields or fault
settings by name, e.g. `make_sandbox(error_rate=0.3, seed=7)` or
`make_sandbox(final_delay=0.5, merchant_callback_url=receiver_url)`. `sandbox_server` also takes
overrides through indirect parametrisation:

    @pytest.mark.parametrize("sandbox_server", [{"lost_response_rate": 1.0}], indirect=True)
    def test_lost(sandbox_server): ...

Every server is stopped when the test ends. `sandbox_server.url` is the base URL,
`.token` the accepted token (the default sandbox token), `.merchant_id` the merchant.
Inspection and run-time faults: `support.stats.sandbox_stats(server)`, `set_faults(server, ...)`.
The factory itself is `support.sandbox.SandboxFactory`; PostgreSQL databases: `support.postgres`.

A module that runs flows in-process asks for `prefect_api` (the API URL): every such module of
a test process shares one Prefect server, `prefect_server`, started on its first use.

A test of reports or the inbox on S3 asks for `s3_server` (moto's server mode on 127.0.0.1, one
per test process, `support.s3.S3Server`): its `.env` holds the AWS settings that reach it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from support.sandbox import MakeSandbox, SandboxFactory
from support.tracking import TRACK_QUIET_PERIOD

from payflow.sandbox import SandboxServer


def pytest_collection_finish(session: pytest.Session) -> None:
    """Fewer passes of the cyclic collector in a test process: what collection imported
    (Prefect, pandas, SQLAlchemy, every test module) is frozen, and the young objects are
    collected every 10,000 new ones, not 700. Full collections over a test process's heap took
    15-19% of its CPU; a test that needs a collection asks for one (`gc.collect()`)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first: with `--dist loadfile --no-loadscope-reorder` (scripts/test.sh) their
    files start at once on their own workers instead of ending the run alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session", autouse=True)
def _short_track_quiet_period() -> Iterator[None]:
    """In-process pay runs (approvals, rerun, daily inbox, console) read `Settings()` from the
    environment: they poll after the tests' short quiet period, not 5 s (support.tracking)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PAYFLOW_TRACK_QUIET_PERIOD", TRACK_QUIET_PERIOD)
        yield


@pytest.fixture
def make_sandbox() -> Iterator[MakeSandbox]:
    """Factory: `make_sandbox(**overrides)` starts a sandbox with fast delays plus overrides."""
    factory = SandboxFactory()
    yield factory.start
    factory.close()


@pytest.fixture
def sandbox_server(request: pytest.FixtureRequest, make_sandbox: MakeSandbox) -> SandboxServer:
    """A started sandbox with fast delays; indirect param: a dict of config overrides."""
    overrides: dict[str, Any] = getattr(request, "param", None) or {}
    return make_sandbox(**overrides)


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This test process's Prefect server for in-process flows, on a fresh database; its API URL.

    One per process, not one per module (Prefect's harness, about 9 s of CPU each time): each
    test reads back only its own runs, by id, tag or batch."""
    # Imported here: Prefect's server modules are slow to import, and most processes need none.
    from prefect.logging.handlers import APILogWorker
    from support.prefect import start_harness_server
    from support.prefect_database import fresh_prefect_database

    home = tmp_path_factory.mktemp("prefect-server")
    fresh_prefect_database(home / "prefect.db", tmp_path_factory)  # start_harness_server's
    server = start_harness_server(home)
    yield server.api_url
    # Logs still queued for the server are sent first, or their worker prints "Error logging
    # to API" once it is gone.
    APILogWorker.drain_all(timeout=5)
    server.stop()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """This test process's S3-compatible server (moto) on 127.0.0.1; an `S3Server`."""
    from support.s3 import moto_server

    with moto_server(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server


@pytest.fixture(scope="module")
def prefect_api(prefect_server: str) -> Iterator[str]:
    """The module's in-process flows run against `prefect_server`; its API URL."""
    from support.prefect import prefect_harness

    with prefect_harness(prefect_server) as url:
        yield url
