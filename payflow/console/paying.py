"""Starting the pay flow for an approved batch: the Prefect deployment when a Prefect server is
configured, otherwise `flows.pay_batch.pay_batch` in a thread of the console's own process."""

from __future__ import annotations

import threading
from typing import Any

from payflow.approvals.decide import prefect_api_configured
from payflow.console.context import ConsoleContext
from payflow.console.operators import record_action

_running: dict[str, threading.Thread] = {}
_lock = threading.Lock()


def start_payment(ctx: ConsoleContext, batch_id: str, actor: str) -> str:
    """Start paying the batch as the ledger holds it now; a sentence saying where it runs.

    The pay flow pays only while the ledger's approval status says Approved (bound to the
    batch's content and totals), so a batch changed since the decision pays nothing."""
    through_prefect = ctx.pay_through_prefect
    if through_prefect is None:
        through_prefect = prefect_api_configured()
    if through_prefect:
        from prefect.deployments import run_deployment

        run: Any = run_deployment(
            ctx.prefect_deployment,
            parameters={"batch_id": batch_id},
            timeout=0,
        )
        record_action(ctx.ledger, actor, "pay_started", batch_id, detail=f"flow run {run.id}")
        return f"payout flow run {run.id} started through the Prefect deployment"
    with _lock:
        running = _running.get(batch_id)
        if running is not None and running.is_alive():
            return "the payout run of this batch is already running"
        thread = threading.Thread(
            target=_pay_here, args=(ctx, batch_id, actor), daemon=True, name="pay-batch"
        )
        _running[batch_id] = thread
    record_action(ctx.ledger, actor, "pay_started", batch_id, detail="in the console process")
    thread.start()
    return "payout run started in the console process"


def _pay_here(ctx: ConsoleContext, batch_id: str, actor: str) -> None:
    from payflow.flows.pay_batch import pay_batch

    try:
        pay_batch(
            batch_id,
            wait_for_approval=False,
            ledger_url=ctx.ledger.url,
            out_dir=str(ctx.batch_dir(batch_id)),
            api_url=ctx.target.api_url,
            sandbox=ctx.target.sandbox,
            callback_url=ctx.target.callback_url,
        )
    except Exception as exc:  # the operator sees one line; the rows stay in the ledger
        record_action(ctx.ledger, actor, "pay_failed", batch_id, detail=_one_line(exc))
        return
    record_action(ctx.ledger, actor, "pay_finished", batch_id)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def is_paying(batch_id: str) -> bool:
    """True while this process pays the batch."""
    thread = _running.get(batch_id)
    return thread is not None and thread.is_alive()
