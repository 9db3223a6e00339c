"""A refund run as its own OS process (the flow's tasks, without Prefect's engine):
`python refund_worker.py LEDGER_URL API_URL FILE` prepares the file and submits it."""

from __future__ import annotations

import sys

from payflow.tasks.connections import RunTarget, new_worker_id
from payflow.tasks.refund_intake import prepare_refund_file
from payflow.tasks.refund_send import submit_refund_batch


def main(ledger_url: str, api_url: str, path: str) -> None:
    target = RunTarget(api_url, ledger_url, sandbox=True)
    prepared = prepare_refund_file.fn(target, path, None)
    stats = submit_refund_batch.fn(target, prepared.batch_id, new_worker_id())
    print(prepared.batch_id, stats.submitted)


if __name__ == "__main__":
    main(*sys.argv[1:4])
