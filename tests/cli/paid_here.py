"""Set-up done in the test process: a batch file run against a standalone sandbox (an API), as
`payflow run FILE --yes` leaves it in the ledger, for tests whose subject is a later command.

A `payflow run` subprocess costs 4-6 s of CPU (Prefect, pandas and pandera imported, the flow
engine) to reach a state these steps reach in a fraction of one: the same reading, look-ups,
validation and registration of the file (so a later `payflow run` of it finds its rows), the
maker's submission, the binding of the ledger to the API, then the payouts sent and followed to
a final status by the engine's own submit and track. Tests about what `payflow run` prints, its exit
code or its signals keep running the command.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.operators import actor, ledger_url_of
from support.tracking import send_and_follow

from payflow.acts import submit
from payflow.api import AsyncPayoutsClient
from payflow.intake import read_batch_file
from payflow.intake.kept import keep_fetched
from payflow.intake.lookups import BankInfo, ServiceInfo, fetch_banks, fetch_services, prefetched
from payflow.intake.to_ledger import register_report
from payflow.ledger import Ledger
from payflow.ledger.service_binding import API, bind_merchant, bind_service
from payflow.sandbox import SandboxServer
from payflow.schemas.lookups import sbp_phones
from payflow.schemas.validation import validate_rows


def run_paid_here(path: Path, env: dict[str, str], sandbox: SandboxServer) -> str:
    """`payflow run PATH --yes` by the maker signed in under `env` (`cli_support.payflow_env`
    against `sandbox`), done here; the batch id. Rows the sandbox leaves PROCESSING are left so."""

    async def pay(ledger: Ledger, batch_id: str) -> None:
        async with AsyncPayoutsClient(sandbox.token, base_url=sandbox.url) as client:
            await send_and_follow(client, ledger, batch_id, "set-up")

    async def lists(phones: list[str]) -> tuple[list[ServiceInfo], dict[str, list[BankInfo]]]:
        async with AsyncPayoutsClient(sandbox.token, base_url=sandbox.url) as client:
            return await fetch_services(client), await fetch_banks(client, phones)

    raw = read_batch_file(path)
    services, banks = asyncio.run(lists(list(sbp_phones(raw))))
    report = validate_rows(raw, services=services, banks_for_phones=prefetched(banks))
    with Ledger.open(ledger_url_of(env)) as ledger:
        bind_service(ledger, API)
        bind_merchant(ledger, sandbox.merchant_id)
        keep_fetched(ledger, services, banks)
        register_report(ledger, report)
        ledger.set_maker(report.batch_id, "maker")
        submit(ledger, report.batch_id, actor(ledger, "maker"))
        asyncio.run(pay(ledger, report.batch_id))
    return report.batch_id
