"""Throwaway databases on the PostgreSQL server (scripts/ensure-postgres.sh)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

PG_ADMIN_URL = os.environ.get(
    "PAYFLOW_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


@contextmanager
def fresh_postgres_database(prefix: str = "payflow_test") -> Iterator[str]:
    """Create an empty database, yield its SQLAlchemy URL, drop it afterwards.

    Raises (no skip) when the server is unreachable: the multi-worker tests must run in CI."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        info = psycopg.conninfo.conninfo_to_dict(PG_ADMIN_URL)
        host, port = info.get("host", "127.0.0.1"), info.get("port", 5432)
        yield f"postgresql+psycopg://{info.get('user', 'postgres')}@{host}:{port}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
