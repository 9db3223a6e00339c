"""Submit throughput against the sandbox: payouts per second against the bound in_flight/latency.

    .venv/bin/python bench/bench_submit.py [--rows 10000] [--in-flight 32] [--latency 0.05]

The sandbox runs as its own process (`payflow sandbox`), as the real service would be remote;
in one process it would share the GIL with the engine and measure itself. The run goes through
`submit_batch` with a SQLite ledger file; each line also prints the CPU seconds this process
used (the engine's, or the bare POSTs'), per payout. Prints the ratio; the target is at least
0.70 at 32 in flight and 50 ms of latency. It asserts nothing: a benchmark on a shared 2-core
machine is a measurement, not a test (`--raw` also times bare POSTs, the ceiling of this
machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import httpx

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.model import PayoutInstruction
from payflow.paying import build_payout_request, submit_batch
from payflow.settings import SANDBOX_TOKEN_DEFAULT


def _rows(count: int, prefix: str) -> list[PayoutInstruction]:
    return [
        PayoutInstruction(
            row_number=n,
            external_id=f"{prefix}-{n}",
            amount=Decimal(5 * (n % 100 + 1)),
            currency="XOF",
            payment_type="SIM",
            requisites=f"2250700{n:06d}",
            name="Bench Recipient",
            user_id=f"user-{n}",
        )
        for n in range(2, count + 2)
    ]


@contextmanager
def _sandbox_process(latency: float) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYFLOW_")}
    command = [sys.executable, "-m", "payflow", "sandbox", "--port", str(port)]
    # No payout moves on during the run: the bench measures submission only.
    command += ["--latency", str(latency), "--processing-delay", "3600"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/_sandbox/stats", timeout=1).raise_for_status()
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the sandbox did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _client(url: str, in_flight: int) -> AsyncPayoutsClient:
    # Built as `runtime.client_for` builds the run's: its own aiohttp pool (http_pools.py), which
    # it sends to directly (`AsyncPayoutsClient._exchange`); a client handed in is not.
    return AsyncPayoutsClient(SANDBOX_TOKEN_DEFAULT, base_url=url, max_in_flight=in_flight)


async def _submit(url: str, ledger: Ledger, batch_id: str, in_flight: int) -> int:
    async with _client(url, in_flight) as client:
        stats = await submit_batch(
            client, ledger, batch_id, worker_id="bench", chunk_size=500, callback_url=None
        )
    return stats.submitted


async def _raw(url: str, rows: list[PayoutInstruction], in_flight: int) -> int:
    async with _client(url, in_flight) as client:
        await asyncio.gather(
            *(client.create_payout(build_payout_request(r, callback_url=None)) for r in rows)
        )
    return len(rows)


def _report(name: str, done: int, elapsed: float, bound: float, cpu: float) -> None:
    rate = done / elapsed
    print(
        f"{name:<8} {done} payouts in {elapsed:.1f} s: {rate:.0f}/s, ratio {rate / bound:.2f}; "
        f"CPU of this process {cpu:.2f} s, {1000 * cpu / max(done, 1):.2f} ms a payout "
        f"({_load()})"
    )


def _load() -> str:
    return "load " + " ".join(f"{n:.2f}" for n in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--raw", action="store_true", help="also time bare POSTs, no ledger")
    args = parser.parse_args()
    bound = args.in_flight / args.latency
    print(f"bound (in flight / latency) {bound:.0f}/s; target ratio >= 0.70")
    with tempfile.TemporaryDirectory() as home, _sandbox_process(args.latency) as url:
        with Ledger.open(f"sqlite:///{Path(home) / 'ledger.sqlite3'}") as ledger:
            batch_id = f"bench-{time.time_ns()}"
            ledger.register_batch(batch_id, "bench.csv", _rows(args.rows, batch_id), [])
            started, cpu = time.perf_counter(), time.process_time()
            submitted = asyncio.run(_submit(url, ledger, batch_id, args.in_flight))
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            _report("engine", submitted, elapsed, bound, cpu)
        if args.raw:
            rows = _rows(args.rows, f"raw-{time.time_ns()}")
            started, cpu = time.perf_counter(), time.process_time()
            sent = asyncio.run(_raw(url, rows, args.in_flight))
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            _report("raw", sent, elapsed, bound, cpu)


if __name__ == "__main__":
    main()
