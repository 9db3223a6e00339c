"""An operator reconciles a batch from its page: every payout fetched again, findings synced,
the report written, as `payflow reconcile` does (both through `payflow.acts.reconcile`)."""

from __future__ import annotations

from payflow.acts.actor import CONSOLE, Actor
from payflow.acts.reconcile import reconcile
from payflow.api import AsyncPayoutsClient
from payflow.connections import with_client
from payflow.console.context import ConsoleContext
from payflow.console.operators import Operator
from payflow.ledger import FindingState
from payflow.reconcile import ReconcileResult, options_from
from payflow.reporting.reconciliation import write_batch_report
from payflow.wording import counted


def reconcile_now(ctx: ConsoleContext, batch_id: str, operator: Operator) -> str:
    """Reconcile the batch with the service and write its report; a one-line notice."""
    options = options_from(ctx.settings)
    actor = Actor(operator, CONSOLE)

    async def run(client: AsyncPayoutsClient) -> ReconcileResult:
        return await reconcile(client, ctx.ledger, batch_id, actor, options)

    result = with_client(ctx.target, run, max_in_flight=options.concurrency)
    write_batch_report(
        ctx.ledger,
        batch_id,
        ctx.batch_dir(batch_id),
        sandbox=ctx.target.sandbox,
        made_by=actor.name,
    )
    open_findings = [f for f in ctx.ledger.findings(batch_id) if f.state == FindingState.OPEN]
    notice = (
        f"reconciled: {counted(result.fetched, 'payout')} fetched again, "
        f"{counted(result.moved, 'row')} moved, {counted(len(open_findings), 'finding')} open"
    )
    if result.unanswered:
        notice += f"; {result.unanswered} not answered by the service (try again later)"
    return notice
