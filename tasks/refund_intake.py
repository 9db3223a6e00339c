"""Refund batch tasks before anything is sent: read, check and register; the balance check."""

from __future__ import annotations

import asyncio

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.paying import BalanceCheck
from payflow.refunds.steps import PreparedRefunds, check_refund_balance, prepare_refunds
from payflow.tasks.connections import RunTarget, open_client, open_ledger


@task(name="prepare-refunds", cache_policy=NO_CACHE)
def prepare_refund_file(
    target: RunTarget, path: str, sheet: str | None, maker: str | None = None
) -> PreparedRefunds:
    """Read the refund file, check every row (file rules, one GET per order), register it with
    its maker (recorded the first time only)."""

    async def run() -> PreparedRefunds:
        async with open_client(target) as client:
            ledger = open_ledger(target.ledger_url)
            return await prepare_refunds(path, client, ledger, sheet=sheet, made_by=maker)

    return asyncio.run(run())


@task(name="check-refund-balance", cache_policy=NO_CACHE)
def check_refund_funds(target: RunTarget, batch_id: str) -> BalanceCheck:
    """Whether the balance covers every refund of the batch not sent yet, per currency."""

    async def run() -> BalanceCheck:
        async with open_client(target) as client:
            return await check_refund_balance(client, open_ledger(target.ledger_url), batch_id)

    return asyncio.run(run())
