"""Set-up done in the test process: a batch file run against a standalone sandbox (an API), as
`payflow run FILE --yes` leaves it in the ledger, a refund file refunded as `payflow refund FILE
--yes` leaves it, and a batch's failed rows rerun as `payflow rerun BATCH --reviewed` leaves them,
for tests whose subject is a later command.

A `payflow run` subprocess costs 4-6 s of CPU (Prefect, pandas and pandera imported, the flow
engine) to reach a state these steps reach in a fraction of one: the same reading, look-ups,
validation and registration of the file (so a later `payflow run` of it finds its rows), the
maker's submission, the binding of the ledger to the API, then the payouts sent and followed to
a final status by the engine's own submit and track. Tests about what `payflow run` prints, its exit
code or its signals keep running the command. `refunded_here` does the same for `payflow refund`
with the refund steps its flow's tasks call (read, check and register, the maker's terms, the
balance, submit, track), and `rerun_here` for `payflow rerun BATCH --rows ... --reviewed` with
the rerun flow's (candidates, the service asked again, the corrected attempts, the maker's rerun
act, then each rerun batch sent and followed). Given no sandbox, `run_paid_here` and
`refunded_here` run on an embedded sandbox started for it and ended with it, as a past run's, by
the command's own maker (PAYFLOW_USER without a sign-in). None writes the run's report file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from support.operators import ledger_url_of
from support.tracking import send_and_follow

from payflow.acts import submit
from payflow.acts.actor import Actor
from payflow.acts.rerun import rerun
from payflow.api import AsyncPayoutsClient
from payflow.cli.signin import acting
from payflow.intake import RawBatch, ValidationReport, read_batch_file
from payflow.intake.kept import keep_fetched
from payflow.intake.lookups import fetch_banks, fetch_services, prefetched
from payflow.intake.to_ledger import register_report
from payflow.ledger import Ledger, ServiceView, WordSource
from payflow.ledger.service_binding import API, SANDBOX, bind_merchant, bind_service
from payflow.refunds.steps import check_refund_balance, prepare_refunds
from payflow.refunds.submit import submit_refunds
from payflow.refunds.track import track_refunds
from payflow.rerun import (
    Candidate,
    Dropped,
    choose,
    classifier,
    find_candidates,
    parse_selection,
    plan_attempts,
    read_corrections,
    refetch_parents,
)
from payflow.rerun.checking import validate_with_lookups
from payflow.sandbox import SandboxConfig, SandboxServer
from payflow.schemas.lookups import sbp_phones
from payflow.schemas.validation import validate_rows
from payflow.settings import Settings


def run_paid_here(
    path: Path, env: dict[str, str], sandbox: SandboxServer | None = None, *, send: bool = True
) -> str:
    """`payflow run PATH --yes` by the maker signed in under `env` (`cli_support.payflow_env`
    against `sandbox`; none: on the embedded sandbox), done here; the batch id. Rows the
    sandbox leaves PROCESSING are left so. Without `send`, the batch is registered and
    submitted by its maker and nothing is sent, as the run leaves a batch that waits for
    approval."""

    async def pay(server: SandboxServer) -> str:
        async with AsyncPayoutsClient(server.token, base_url=server.url) as client:
            raw = read_batch_file(path)
            phones = list(sbp_phones(raw))
            services, banks = await fetch_services(client), await fetch_banks(client, phones)
            report = validate_rows(raw, services=services, banks_for_phones=prefetched(banks))
            with Ledger.open(ledger_url_of(env)) as ledger:
                keep_fetched(ledger, services, banks)
                register_report(ledger, report)
                ledger.set_maker(report.batch_id, maker.name)
                submit(ledger, report.batch_id, maker)
                if send:
                    await send_and_follow(client, ledger, report.batch_id, "set-up")
            return report.batch_id

    maker = _bound_with_maker(env, sandbox, "registers a batch")
    return _on(sandbox, env, pay)


def refunded_here(
    path: Path, env: dict[str, str], sandbox: SandboxServer | None = None, *, deadline: float = 3
) -> str:
    """`payflow refund PATH --yes` under `env`, done here as `run_paid_here` pays; the refund
    batch id. Refunds not final within `deadline` seconds are left so, as at the command's."""

    async def refund(server: SandboxServer) -> str:
        async with AsyncPayoutsClient(server.token, base_url=server.url) as client:
            with Ledger.open(ledger_url_of(env)) as ledger:
                prepared = await prepare_refunds(path, client, ledger, made_by=maker.name)
                batch_id = prepared.batch_id
                submit(ledger, batch_id, maker)
                assert (await check_refund_balance(client, ledger, batch_id)).ok
                await submit_refunds(
                    client, ledger, batch_id, worker_id="set-up", callback_url=None
                )
                await track_refunds(client, ledger, batch_id, deadline=deadline, first_wait=0.05)
            return batch_id

    maker = _bound_with_maker(env, sandbox, "registers refunds")
    return _on(sandbox, env, refund)


def rerun_here(
    batch_id: str,
    rows: str,
    corrections: Path | None,
    env: dict[str, str],
    sandbox: SandboxServer,
) -> list[str]:
    """`payflow rerun BATCH_ID --rows ROWS [--corrections FILE] --reviewed` by the maker signed
    in under `env` against `sandbox`, done here with the rerun flow's steps; the rerun batches
    sent. A refused choice or correction raises RerunRefused, as the command fails."""
    maker = _bound_with_maker(env, sandbox, "reruns rows")
    fixes = read_corrections(corrections) if corrections is not None else {}

    def client() -> AsyncPayoutsClient:
        return AsyncPayoutsClient(sandbox.token, base_url=sandbox.url)

    def validate(raw: RawBatch) -> ValidationReport:  # the corrections, by the batch rules
        async def checked() -> ValidationReport:
            async with client() as api:
                return await validate_with_lookups(api, raw)

        return asyncio.run(checked())

    with Ledger.open(ledger_url_of(env)) as ledger:

        def heard(views: Sequence[ServiceView]) -> None:
            ledger.save_service_views(batch_id, views, WordSource.RERUN)

        async def refetched(chosen: list[Candidate]) -> tuple[list[Candidate], list[Dropped]]:
            async with client() as api:
                return await refetch_parents(api, chosen, heard)

        async def sent(to_pay: list[str]) -> None:
            async with client() as api:
                for rerun_id in to_pay:
                    await send_and_follow(api, ledger, rerun_id, "set-up")

        candidates = find_candidates(ledger, batch_id, classifier())
        chosen = choose(candidates, parse_selection(rows, None, None, False))
        kept, _ = asyncio.run(refetched(chosen))
        if kept:
            rerun(ledger, batch_id, plan_attempts(ledger, kept, fixes, validate), maker)
        to_pay = [r for r in ledger.rerun_batches(batch_id) if ledger.batch_counts(r).to_send]
        asyncio.run(sent(to_pay))
    return to_pay


def _bound_with_maker(env: dict[str, str], sandbox: SandboxServer | None, doing: str) -> Actor:
    """The ledger bound as the run binds it (to the API and its merchant, or to the embedded
    sandbox), and the run's maker, found by the command's own `acting`."""
    with Ledger.open(ledger_url_of(env)) as ledger:
        if sandbox is None:
            bind_service(ledger, SANDBOX)
        else:
            bind_service(ledger, API)
            bind_merchant(ledger, sandbox.merchant_id)
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            **{
                k.removeprefix("PAYFLOW_").lower(): v
                for k, v in env.items()
                if k.startswith("PAYFLOW_")
            },
        )
        return acting(settings, ledger, "maker", doing, binds_sandbox=True)


def _on(
    sandbox: SandboxServer | None,
    env: dict[str, str],
    steps: Callable[[SandboxServer], Coroutine[Any, Any, str]],
) -> str:
    """`steps` run against `sandbox`, or against an embedded sandbox that ends with them."""
    if sandbox is not None:
        return asyncio.run(steps(sandbox))
    with SandboxServer(SandboxConfig.from_env(env)) as embedded:
        return asyncio.run(steps(embedded))
