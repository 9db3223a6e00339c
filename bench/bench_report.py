"""Reconciliation report of a large batch: time and peak memory of streaming it to XLSX and CSV.

    .venv/bin/python bench/bench_report.py [--rows 100000]

The ledger (a SQLite file) gets `--rows` registered rows, nine in ten COMPLETED and one in ten
FAILED, set by one SQL UPDATE; then `write_batch_report` streams every row into both files and
computes the summary with GROUP BY. Prints seconds and the process's peak resident memory
before and after the report, so the report's own share is visible. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from sqlalchemy import case, update

from payflow.ledger import Ledger
from payflow.ledger.tables import Payout
from payflow.model import PayoutInstruction
from payflow.reporting import write_batch_report


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    rows = parser.parse_args().rows
    with (
        tempfile.TemporaryDirectory() as folder,
        Ledger.open(f"sqlite:///{folder}/ledger.sqlite3") as ledger,
    ):
        ledger.register_batch(
            "bench",
            "bench.csv",
            [
                PayoutInstruction(
                    row_number=n,
                    external_id=f"bench-{n}",
                    amount=Decimal(n % 997) + Decimal("0.25"),
                    currency="RUB" if n % 2 else "XOF",
                    payment_type="SIM",
                    requisites=f"2250700{n:06d}",
                    name="Awa Kone",
                    user_id=f"u{n}",
                )
                for n in range(2, rows + 2)
            ],
            [],
        )
        with ledger._engine.begin() as connection:
            failed = Payout.row_number % 10 == 0
            connection.execute(
                update(Payout).values(state=case((failed, "FAILED"), else_="COMPLETED"))
            )
        before = _peak_mib()
        started, cpu_started = time.perf_counter(), time.process_time()
        report = write_batch_report(ledger, "bench", Path(folder), sandbox=True)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        size = report.xlsx.stat().st_size / 2**20
    print(f"rows: {rows}")
    print(
        f"report (XLSX + CSV + SQL summary): {seconds:.2f} s, {rows / seconds:.0f} rows/s, "
        f"CPU {cpu_seconds:.2f} s ({cpu_seconds / rows * 1000:.2f} ms a row), "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(f"peak RSS before report: {before:.0f} MiB, after: {_peak_mib():.0f} MiB")
    print(f"xlsx size: {size:.1f} MiB")


if __name__ == "__main__":
    main()
