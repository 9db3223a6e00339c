"""Opening the ledger migrates it, twice is harmless, several processes may race to do it, and
the models and the migrations describe the same schema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from ledger_worker_runner import run_workers
from sqlalchemy import create_engine, inspect, text
from support.postgres import fresh_postgres_database

from payflow.ledger import Ledger
from payflow.ledger.db import HEAD_REVISION, MIGRATIONS_DIR, LedgerUrlError
from payflow.ledger.tables import Base

EXPECTED_TABLES = {
    "alembic_version",
    "batches",
    "batch_rows",
    "payouts",
    "status_events",
    "service_checks",
    "findings",
    "finding_events",
    "balance_snapshots",
}


def _head() -> str | None:
    return ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()


def test_open_migrates_to_head_and_again_is_a_no_op(ledger_url: str) -> None:
    Ledger.open(ledger_url).close()
    with Ledger.open(ledger_url):  # second open: nothing to do, nothing breaks
        pass
    engine = create_engine(ledger_url)
    try:
        assert set(inspect(engine).get_table_names()) >= EXPECTED_TABLES
        with engine.connect() as connection:
            versions = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        assert [v for (v,) in versions] == [_head()]
    finally:
        engine.dispose()


def test_the_head_revision_constant_is_the_newest_migration() -> None:
    assert _head() == HEAD_REVISION


OPEN_AND_SHOW_ALEMBIC = """
import sys
from payflow.ledger import Ledger
Ledger.open(sys.argv[1]).close()
print("alembic" in sys.modules)
"""


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_a_ledger_at_head_opens_without_alembic(backend: str, tmp_path: Path) -> None:
    def alembic_loaded(url: str) -> bool:
        shown = subprocess.run(
            [sys.executable, "-c", OPEN_AND_SHOW_ALEMBIC, url],
            capture_output=True,
            text=True,
            check=True,
        )
        return shown.stdout.strip() == "True"

    def new_and_again(url: str) -> None:
        assert alembic_loaded(url)  # a new ledger: migrated
        assert not alembic_loaded(url)  # at head: one query, no Alembic import

    if backend == "sqlite":
        new_and_again(f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    else:
        with fresh_postgres_database() as url:  # its own: the session's is migrated already
            new_and_again(url)


def test_models_and_migrations_agree(ledger_url: str) -> None:
    Ledger.open(ledger_url).close()
    engine = create_engine(ledger_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def test_sqlite_ledger_runs_in_wal_mode(sqlite_url: str) -> None:
    with Ledger.open(sqlite_url):
        pass
    engine = create_engine(sqlite_url)
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        engine.dispose()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "mysql://u@h/db"])
def test_unsupported_urls_are_refused_clearly(url: str) -> None:
    with pytest.raises(LedgerUrlError):
        Ledger.open(url)


def test_three_processes_opening_a_new_sqlite_file_migrate_it_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'raced.sqlite3'}"
    results = run_workers(tmp_path, [["open", url]] * 3)
    assert [r["opened"] for r in results] == ["sqlite"] * 3
    test_open_migrates_to_head_and_again_is_a_no_op(url)


def test_processes_opening_new_sqlite_files_together_never_see_database_is_locked(
    tmp_path: Path,
) -> None:
    # While one process switches a brand-new file to WAL, SQLite answers another's switch with
    # "database is locked" at once, without waiting out the busy timeout. Three processes opening
    # 100 new files in lockstep met it in each of four runs before the connection retried it.
    directory = tmp_path / "ledgers"
    directory.mkdir()
    workers, files = 3, 100
    argvs = [
        ["open-new-files", str(directory), str(workers), str(index), str(files)]
        for index in range(workers)
    ]
    results = run_workers(tmp_path, argvs)
    assert [r["errors"] for r in results] == [[]] * workers


@pytest.mark.postgres
def test_three_processes_opening_a_new_postgres_database_migrate_it_once(tmp_path: Path) -> None:
    with fresh_postgres_database() as url:
        results = run_workers(tmp_path, [["open", url]] * 3)
        assert [r["opened"] for r in results] == ["postgresql"] * 3
        test_open_migrates_to_head_and_again_is_a_no_op(url)


def test_sqlite_readers_do_not_wait_for_a_writer(sqlite_url: str) -> None:
    import time

    with Ledger.open(sqlite_url) as ledger:
        writer = create_engine(sqlite_url, connect_args={"timeout": 30})
        try:
            with writer.connect() as connection:
                connection.exec_driver_sql("BEGIN IMMEDIATE")  # another process mid-claim
                started = time.monotonic()
                assert ledger.batch_summary("nothing") == {}
                assert not ledger.batch_exists("nothing")
                assert time.monotonic() - started < 5
                connection.exec_driver_sql("ROLLBACK")
        finally:
            writer.dispose()
