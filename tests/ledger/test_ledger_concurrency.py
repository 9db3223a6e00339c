"""The important one: several real processes claim from one batch at once, and every row is
claimed exactly once (none twice, none lost), on a SQLite file and on PostgreSQL."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from ledger_support import instructions, unique
from ledger_worker_runner import run_workers
from sqlalchemy import create_engine, text
from support.postgres import fresh_postgres_database

from payflow.ledger import Ledger

ROWS = 3_000
WORKERS = 3
LIMIT = 40


def _claim_concurrently(url: str, tmp_path: Path) -> None:
    batch, p = unique("b"), unique()
    with Ledger.open(url) as ledger:
        ledger.register_batch(batch, "big.csv", instructions(p, ROWS), [])
    argvs = [["claim", url, batch, f"worker-{n}", str(LIMIT)] for n in range(WORKERS)]
    results = run_workers(tmp_path, argvs)

    claimed = Counter(ext for r in results for ext in r["claimed"])
    assert [ext for ext, n in claimed.items() if n > 1] == []  # none twice
    assert set(claimed) == {f"{p}-{row}" for row in range(2, ROWS + 2)}  # none lost
    assert sum(1 for r in results if r["claims"] > 0) >= 2, "the workers never overlapped"

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text(
                    "SELECT state, attempts, claimed_by, COUNT(*) FROM payouts"
                    " WHERE batch_id = :b GROUP BY state, attempts, claimed_by"
                ),
                {"b": batch},
            ).all()
            events = connection.execute(
                text(
                    "SELECT COUNT(*), COUNT(DISTINCT e.external_id) FROM status_events e"
                    " JOIN payouts p ON p.external_id = e.external_id WHERE p.batch_id = :b"
                ),
                {"b": batch},
            ).one()
    finally:
        engine.dispose()
    by_worker = {r["worker"]: len(r["claimed"]) for r in results}
    assert sorted((s, a, w, n) for s, a, w, n in rows) == sorted(
        ("SUBMITTING", 1, w, n) for w, n in by_worker.items() if n
    )
    assert tuple(events) == (ROWS, ROWS)  # one VALIDATED -> SUBMITTING event per row


def test_processes_claim_every_row_exactly_once_on_sqlite(tmp_path: Path) -> None:
    _claim_concurrently(f"sqlite:///{tmp_path / 'shared.sqlite3'}", tmp_path)


@pytest.mark.postgres
def test_processes_claim_every_row_exactly_once_on_postgres(tmp_path: Path) -> None:
    with fresh_postgres_database() as url:
        _claim_concurrently(url, tmp_path)


def _register_concurrently(url: str, tmp_path: Path) -> None:
    batch, p = unique("b"), unique()
    results = run_workers(tmp_path, [["register", url, batch, p, "2000"]] * 2)
    assert sum(r["new"] for r in results) == 2000
    assert all(r["new"] + r["already"] == 2000 for r in results)
    with Ledger.open(url) as ledger:
        assert ledger.batch_summary(batch) == {"VALIDATED": 2000}
        assert [r.row_number for r in ledger.batch_rows(batch)] == list(range(2, 2002))


def test_two_runs_registering_one_batch_at_once_on_sqlite(tmp_path: Path) -> None:
    _register_concurrently(f"sqlite:///{tmp_path / 'shared.sqlite3'}", tmp_path)


@pytest.mark.postgres
def test_two_runs_registering_one_batch_at_once_on_postgres(
    tmp_path: Path, postgres_url: str
) -> None:
    _register_concurrently(postgres_url, tmp_path)
