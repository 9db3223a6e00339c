"""A separate process for the concurrency tests: open a ledger, wait for the go file, then act.

Usage: ledger_worker.py open URL GO_FILE
       ledger_worker.py open-new-files DIRECTORY GO_FILE WORKERS INDEX FILES
       ledger_worker.py claim URL GO_FILE BATCH_ID WORKER_ID LIMIT
       ledger_worker.py register URL GO_FILE BATCH_ID PREFIX COUNT
Prints "ready" once set up, then one JSON line with what it did.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ledger_support import instructions
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from payflow.ledger import Ledger, register
from payflow.ledger.db import create_ledger_engine, reader


def _wait_for(go_file: Path) -> None:
    deadline = time.monotonic() + 60
    while not go_file.exists():
        if time.monotonic() > deadline:
            raise SystemExit("go file never appeared")
        time.sleep(0.005)


def _open_new_files(directory: Path, go_file: Path, workers: int, index: int, files: int) -> None:
    """Connect to FILES new SQLite ledgers, each at the same moment as the other workers (one
    lockstep round per file); report each error instead of stopping, so the others go on."""
    print("ready", flush=True)
    _wait_for(go_file)
    errors: list[str] = []
    for number in range(files):
        (directory / f"arrived-{number}-{index}").touch()
        deadline = time.monotonic() + 60
        while len(list(directory.glob(f"arrived-{number}-*"))) < workers:
            if time.monotonic() > deadline:
                raise SystemExit(f"the other workers never reached file {number}")
            time.sleep(0.0005)
        engine = create_ledger_engine(f"sqlite:///{directory / f'ledger-{number}.sqlite3'}")
        try:
            with reader(engine).connect() as connection:
                connection.execute(text("SELECT 1"))
        except OperationalError as error:
            errors.append(str(error.orig))
        finally:
            engine.dispose()
    print(json.dumps({"errors": errors}), flush=True)


def _register(url: str, go_file: Path, batch_id: str, prefix: str, count: int) -> None:
    register.CHUNK_ROWS = 250  # many small chunks, so two registrations interleave
    rows = instructions(prefix, count)
    with Ledger.open(url) as ledger:
        print("ready", flush=True)
        _wait_for(go_file)
        outcome = ledger.register_batch(batch_id, "same.csv", rows, [])
    print(json.dumps({"new": outcome.new, "already": outcome.already_registered}), flush=True)


def main(argv: list[str]) -> None:
    mode, url, go_file = argv[0], argv[1], Path(argv[2])
    if mode == "open":
        print("ready", flush=True)
        _wait_for(go_file)
        with Ledger.open(url) as ledger:
            print(json.dumps({"opened": ledger.dialect}), flush=True)
        return
    if mode == "open-new-files":
        _open_new_files(Path(url), go_file, int(argv[3]), int(argv[4]), int(argv[5]))
        return
    if mode == "register":
        _register(url, go_file, argv[3], argv[4], int(argv[5]))
        return
    batch_id, worker_id, limit = argv[3], argv[4], int(argv[5])
    claimed: list[str] = []
    claims = 0
    with Ledger.open(url) as ledger:
        print("ready", flush=True)
        _wait_for(go_file)
        while batch := ledger.claim_for_submit(batch_id, worker_id, limit):
            claims += 1
            claimed.extend(c.external_id for c in batch)
            # A real worker POSTs between claims; long enough that the others overlap even on a
            # loaded machine (the test asserts they did).
            time.sleep(0.01)
    print(json.dumps({"worker": worker_id, "claims": claims, "claimed": claimed}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
