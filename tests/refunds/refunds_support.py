"""Helpers for the refund tests: paid orders in the sandbox, refund files, a whole run by steps."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from paying_support import make_client

from payflow.ledger import Ledger
from payflow.refunds.steps import PreparedRefunds, check_refund_balance, prepare_refunds
from payflow.refunds.submit import submit_refunds
from payflow.refunds.track import RefundTrackResult, track_refunds
from payflow.sandbox import SandboxServer

HEADER = ["orderId", "externalId", "amount", "reason", "callbackUrl"]


def paid_orders(
    server: SandboxServer, count: int, amount: str = "100.00", currency: str = "RUB", **more: Any
) -> list[str]:
    """Create `count` COMPLETED orders through the sandbox's test route; their ids."""
    body = {"count": count, "amount": amount, "currency": currency, **more}
    response = httpx.post(f"{server.url}/_sandbox/orders/bulk", json=body, timeout=30)
    response.raise_for_status()
    ids: list[str] = response.json()["ids"]
    return ids


def write_refunds(
    path: Path, rows: Sequence[Sequence[str]], header: Sequence[str] = HEADER
) -> Path:
    """Write a refund CSV with `header` and `rows`."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


async def run_refunds(
    path: Path,
    server: SandboxServer,
    ledger: Ledger,
    *,
    callback_url: str | None = None,
    deadline: float = 60.0,
) -> tuple[PreparedRefunds, RefundTrackResult]:
    """The refund flow's steps in order, without Prefect: prepare, balance, submit, track."""
    async with make_client(server) as client:
        prepared = await prepare_refunds(path, client, ledger)
        balance = await check_refund_balance(client, ledger, prepared.batch_id)
        balance.raise_if_short()
        await submit_refunds(
            client, ledger, prepared.batch_id, worker_id="test-worker", callback_url=callback_url
        )
        tracked = await track_refunds(
            client, ledger, prepared.batch_id, deadline=deadline, first_wait=0.2, max_interval=1
        )
    return prepared, tracked
