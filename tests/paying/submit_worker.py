"""One submit worker as its own OS process: `python submit_worker.py LEDGER_URL API_URL BATCH_ID
WORKER_ID` reads the token from PAYFLOW_TEST_TOKEN and prints its SubmitStats as JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import asdict

from payflow.api import AsyncPayoutsClient
from payflow.http_pools import pooled_http_client
from payflow.ledger import Ledger
from payflow.paying import submit_batch


async def main(ledger_url: str, api_url: str, batch_id: str, worker_id: str) -> None:
    token = os.environ["PAYFLOW_TEST_TOKEN"]
    with Ledger.open(ledger_url) as ledger:
        async with (
            pooled_http_client(16) as http,
            AsyncPayoutsClient(
                token, base_url=api_url, max_in_flight=16, http_client=http
            ) as client,
        ):
            stats = await submit_batch(
                client, ledger, batch_id, worker_id=worker_id, chunk_size=25, callback_url=None
            )
    print(json.dumps(asdict(stats)))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
