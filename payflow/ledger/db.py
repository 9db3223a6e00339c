"""Engines for the ledger and the migrations run when it opens.

SQLite: WAL (its switch retried while another process switches a new file), a busy timeout and
`BEGIN IMMEDIATE` for every transaction, so two processes on one file take turns instead of
failing half-way through a claim. PostgreSQL: an advisory lock around the Alembic upgrade, so
two workers starting at once migrate once.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import ConnectionPoolEntry

from payflow.file_access import FileAccessRefused, describe_owner, ensure_file, make_folder

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
# The newest revision in migrations/versions (a test holds the two together). A ledger already
# there opens without importing Alembic, a quarter of a second of every `payflow run`.
HEAD_REVISION = "0025"
SQLITE_BUSY_TIMEOUT_MS = 30_000
WAL_SWITCH_RETRY_S = 0.01
# Any fixed 64-bit number works; this one spells "payflowL" so it is easy to spot in pg_locks.
MIGRATION_LOCK_KEY = 0x7061_7966_6C6F_774C
# A second key serialises registrations, which decide NEW / ALREADY_KNOWN / CONFLICT by reading.
REGISTER_LOCK_KEY = MIGRATION_LOCK_KEY + 1
READ_ONLY_OPTION = "payflow_ledger_read_only"


class LedgerUrlError(ValueError):
    """The ledger URL names a backend the ledger does not support."""


class LedgerAccessError(FileAccessRefused):
    """This OS user cannot write the ledger's SQLite file; the message says what to do."""


def create_ledger_engine(url: str) -> Engine:
    """An engine for a SQLite file or PostgreSQL URL, configured for several processes."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            raise LedgerUrlError("the ledger needs a SQLite file path, not an in-memory database")
        _prepare_sqlite_file(Path(database))
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        return create_engine(parsed, pool_pre_ping=True)
    raise LedgerUrlError(f"unsupported ledger backend {backend!r}: use sqlite or postgresql")


def _prepare_sqlite_file(database: Path) -> None:
    """Make the ledger file (and its folder) with payflow's file access before SQLite opens it:
    SQLite gives its -wal, -shm and journal the database file's mode. Refuse in one line a file
    this OS user cannot write (another person's, not shared): SQLite opened it read-only and
    the first write failed as "unexpected error (OperationalError)"."""
    make_folder(database.parent)
    _check_writable(database.parent, os.W_OK | os.X_OK)  # SQLite makes its -wal and -shm there
    ensure_file(database)
    for suffix in ("", "-wal", "-shm"):
        _check_writable(database.with_name(database.name + suffix), os.R_OK | os.W_OK)


def _check_writable(path: Path, wanted: int) -> None:
    if path.exists() and not os.access(path, wanted):
        raise LedgerAccessError(
            f"this OS user cannot write {path} ({describe_owner(path)}): share the ledger "
            "through a group (PAYFLOW_SHARED_GROUP, the file and its folder in that group) "
            "or use PostgreSQL; see docs/multi-user.md"
        )


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # Take transaction control away from the sqlite3 module so "begin" below decides.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        _switch_to_wal(cursor)
        # FULL: a SUBMITTING mark must survive a power cut, or the row could be paid twice.
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.execute("PRAGMA foreign_keys = ON")
        # 64 MiB of page cache keeps the externalId index of a million-row batch in memory.
        cursor.execute("PRAGMA cache_size = -65536")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # IMMEDIATE takes the write lock up front: a deferred transaction that reads, then
        # writes, can fail with SQLITE_BUSY instead of waiting when another process wrote.
        # Readers (see `reader`) need no lock: WAL gives them a snapshot.
        read_only = connection.get_execution_options().get(READ_ONLY_OPTION, False)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _switch_to_wal(cursor: Any) -> None:
    """Set WAL, retrying "database is locked" until the busy timeout: while another process
    switches a brand-new file, SQLite answers SQLITE_BUSY at once instead of waiting."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(WAL_SWITCH_RETRY_S)


def reader(engine: Engine) -> Engine:
    """The same engine for queries that never write (on SQLite they take no write lock)."""
    return engine.execution_options(**{READ_ONLY_OPTION: True})


def alembic_config(connection: Connection) -> Config:
    """An Alembic config pointing at the packaged migrations, bound to `connection`."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def take_lock(connection: Connection, key: int) -> None:
    """On PostgreSQL, hold an advisory lock until the current transaction ends."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def dialect_insert(connection: Connection, table: Any) -> Any:
    """An INSERT of the connection's dialect, which has `on_conflict_do_nothing/_do_update`."""
    # Imported here: PostgreSQL's dialect costs a SQLite ledger's every command 50 ms to load.
    name = "postgresql" if connection.dialect.name == "postgresql" else "sqlite"
    dialect: Any = importlib.import_module(f"sqlalchemy.dialects.{name}")
    return dialect.insert(table)


def batch_lock_key(purpose: str, batch_id: str) -> int:
    """A stable advisory-lock key for one purpose on one batch (a signed 64-bit integer)."""
    digest = hashlib.sha256(f"{purpose}:{batch_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def upgrade_to_head(engine: Engine) -> None:
    """Run the migrations to head in one locked transaction; a no-op when already there."""
    if _at_head(engine):
        return
    from alembic import command

    with engine.begin() as connection:
        # On SQLite, BEGIN IMMEDIATE is the lock: a second process waits, then finds head.
        take_lock(connection, MIGRATION_LOCK_KEY)
        command.upgrade(alembic_config(connection), "head")


def _at_head(engine: Engine) -> bool:
    """Whether the ledger is at HEAD_REVISION; a new, older or newer one is left to the locked
    Alembic upgrade. A database that cannot be reached raises here, as it would there."""
    with reader(engine).connect() as connection:
        try:
            versions = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        except DBAPIError:
            return False  # no alembic_version table: a new ledger
    return [version for (version,) in versions] == [HEAD_REVISION]
