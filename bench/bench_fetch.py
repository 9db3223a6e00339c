"""What one GET of a payout costs in CPU: payflow's client against aiohttp, at N in flight.

    .venv/bin/python bench/bench_fetch.py [--payouts 2000] [--fetches 20000] [--in-flight 128]
        [--latency 0.05] [--repeat 2]

A reconciliation fetches every payout of a batch once (the API has no list endpoint); from
about 100 in flight it is bound by its own process's CPU (docs/performance.md). This bench
creates `--payouts` payouts in a sandbox process, then fetches them `--fetches` times in all,
alternating: through `AsyncPayoutsClient.get_payout` (httpx over aiohttp's pool, as `payflow
reconcile` builds it) and through a bare aiohttp session, each answer read into the same
`Payout` model. The bare line is a ceiling for a lighter client, not a client: it has no
retries, error mapping or logging. It prints the wall time,
this process's CPU and the CPU per fetch; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Callable, Coroutine
from typing import Any

from bench_submit import _rows, _sandbox_process

from payflow.api import AsyncPayoutsClient
from payflow.api.models import Payout
from payflow.paying import build_payout_request
from payflow.settings import SANDBOX_TOKEN_DEFAULT

Fetcher = Callable[[str, list[str], int], Coroutine[Any, Any, None]]


async def _create(url: str, count: int) -> list[str]:
    rows = _rows(count, f"fetch-{time.time_ns()}")
    async with AsyncPayoutsClient(SANDBOX_TOKEN_DEFAULT, base_url=url, max_in_flight=64) as c:
        made = await asyncio.gather(
            *(c.create_payout(build_payout_request(row, callback_url=None)) for row in rows)
        )
    return [payout.id for payout in made]


async def _payflow(url: str, ids: list[str], in_flight: int) -> None:
    async with AsyncPayoutsClient(
        SANDBOX_TOKEN_DEFAULT, base_url=url, max_in_flight=in_flight
    ) as client:
        await asyncio.gather(*(client.get_payout(payout_id) for payout_id in ids))


async def _aiohttp(url: str, ids: list[str], in_flight: int) -> None:
    import aiohttp

    slots = asyncio.Semaphore(in_flight)
    headers = {"X-Api-Token": SANDBOX_TOKEN_DEFAULT, "Accept": "application/json"}
    connector = aiohttp.TCPConnector(limit=in_flight)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def fetch(payout_id: str) -> None:
            async with slots, session.get(f"{url}/v1/payouts/{payout_id}") as response:
                response.raise_for_status()
                Payout.model_validate(json.loads(await response.read()))

        await asyncio.gather(*(fetch(payout_id) for payout_id in ids))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--payouts", type=int, default=2000)
    parser.add_argument("--fetches", type=int, default=20_000)
    parser.add_argument("--in-flight", type=int, default=128)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    bound = args.fetches * args.latency / args.in_flight
    print(f"{args.fetches} fetches at {args.in_flight} in flight, {args.latency} s a request:")
    print(f"bound {bound:.1f} s ({_load()})")
    with _sandbox_process(args.latency) as url:
        ids = asyncio.run(_create(url, args.payouts))
        wanted = [ids[n % len(ids)] for n in range(args.fetches)]
        fetchers: dict[str, Fetcher] = {"payflow's client": _payflow, "bare aiohttp": _aiohttp}
        for _ in range(args.repeat):
            for name, fetch in fetchers.items():
                started, cpu = time.perf_counter(), time.process_time()
                asyncio.run(fetch(url, wanted, args.in_flight))
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
                print(
                    f"  {name:<17} {elapsed:.1f} s; CPU of this process {cpu:.1f} s, "
                    f"{1000 * cpu / args.fetches:.2f} ms a fetch ({_load()})"
                )


def _load() -> str:
    return "load " + " ".join(f"{n:.2f}" for n in os.getloadavg())


if __name__ == "__main__":
    main()
