"""One OS process running a rerun of the given rows, for the two-reruns-at-once test.

Runs the same functions the rerun-failed flow's tasks call. It reads its candidates, then
writes `ready-<pid>` beside the go file and registers only once the go file appears, so both
workers have read the same ledger before either claims a row.
Usage: rerun_worker.py SANDBOX_URL LEDGER_URL BATCH_ID ROWS GO_FILE
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.paying import submit_batch
from payflow.rerun import (
    Selection,
    choose,
    classifier,
    find_candidates,
    parse_rows,
    plan_attempts,
    refetch_parents,
    register_rerun,
)
from payflow.sandbox import SandboxConfig


async def main(url: str, ledger_url: str, batch_id: str, rows: str, go: Path) -> None:
    with Ledger.open(ledger_url) as ledger:
        candidates = find_candidates(ledger, batch_id, classifier())
        chosen = choose(candidates, Selection(parse_rows(rows)))
        async with AsyncPayoutsClient(SandboxConfig().token, base_url=url) as client:
            kept, _ = await refetch_parents(client, chosen)
            go.with_name(f"ready-{os.getpid()}").touch()
            while not go.exists():
                time.sleep(0.01)
            outcome = register_rerun(ledger, batch_id, plan_attempts(ledger, kept, {}, None), "t")
            print(f"created={len(outcome.created)} refused={len(outcome.refused)}", flush=True)
            await submit_batch(
                client,
                ledger,
                outcome.batch_id,
                worker_id=str(go),
                chunk_size=10,
                callback_url=None,
            )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5], Path(sys.argv[5])))
