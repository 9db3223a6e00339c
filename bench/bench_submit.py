"""Submit throughput against the sandbox: payouts per second against the bound in_flight/latency.

    .venv/bin/python bench/bench_submit.py [--rows 10000] [--in-flight 32] [--latency 0.05]

Prints the ratio; the target is at least 0.70 at 32 in flight and 50 ms of latency. It asserts
nothing: a benchmark on a shared 2-core machine is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.model import PayoutInstruction
from payflow.paying import submit_batch
from payflow.sandbox import SandboxConfig, SandboxServer


def _rows(count: int) -> list[PayoutInstruction]:
    return [
        PayoutInstruction(
            row_number=n,
            external_id=f"bench-{time.time_ns()}-{n}",
            amount=Decimal(5 * (n % 100 + 1)),
            currency="XOF",
            payment_type="SIM",
            requisites=f"2250700{n:06d}",
            name="Bench Recipient",
            user_id=f"user-{n}",
        )
        for n in range(2, count + 2)
    ]


async def _submit(server: SandboxServer, ledger: Ledger, batch_id: str, in_flight: int) -> int:
    async with AsyncPayoutsClient(
        server.token, base_url=server.url, max_in_flight=in_flight
    ) as client:
        stats = await submit_batch(
            client, ledger, batch_id, worker_id="bench", chunk_size=500, callback_url=None
        )
    return stats.submitted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()

    config = SandboxConfig().with_overrides(latency=args.latency, processing_delay=3600.0)
    with tempfile.TemporaryDirectory() as home, SandboxServer(config) as server:
        ledger = Ledger.open(f"sqlite:///{Path(home) / 'ledger.sqlite3'}")
        batch_id = f"bench-{time.time_ns()}"
        ledger.register_batch(batch_id, "bench.csv", _rows(args.rows), [])
        started = time.perf_counter()
        submitted = asyncio.run(_submit(server, ledger, batch_id, args.in_flight))
        elapsed = time.perf_counter() - started
        ledger.close()
    rate = submitted / elapsed
    bound = args.in_flight / args.latency
    print(f"rows submitted     {submitted} in {elapsed:.1f} s")
    print(f"payouts per second {rate:.0f}")
    print(f"bound (in flight / latency) {bound:.0f} per second")
    print(f"ratio              {rate / bound:.2f}  (target >= 0.70)")


if __name__ == "__main__":
    main()
