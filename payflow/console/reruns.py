"""A maker reruns chosen failed rows: `payflow.rerun`'s steps, then the rerun batch waits for a
checker like any other batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from payflow.acts import Actor, submit
from payflow.acts.actor import CONSOLE
from payflow.api import AsyncPayoutsClient
from payflow.connections import with_client
from payflow.console.context import ConsoleContext
from payflow.console.history import RERUN_CREATED, RERUN_DETAIL
from payflow.console.operators import Operator
from payflow.ledger import ServiceView, WordSource
from payflow.ledger.actions import record_action
from payflow.rerun import (
    Candidate,
    Dropped,
    RerunRefused,
    Selection,
    choose,
    classifier,
    find_candidates,
    plan_attempts,
    refetch_parents,
    register_rerun,
    rerun_batch_id,
)
from payflow.wording import plural


@dataclass(frozen=True)
class RerunStarted:
    """The rerun batch registered (None when every chosen row was dropped) and what was dropped."""

    rerun_batch_id: str | None
    created: list[str]
    dropped: list[str]


def rerun_rows(
    ctx: ConsoleContext, batch_id: str, maker: Operator, rows: Sequence[int], reasons_read: bool
) -> RerunStarted:
    """Register the chosen rows' next attempts as a rerun batch submitted for approval."""
    if not maker.has("maker"):
        raise RerunRefused("only a maker reruns rows")
    if not reasons_read:
        raise RerunRefused("confirm that you read why the rows failed; nothing was sent")
    if not rows:
        raise RerunRefused("choose rows or groups to rerun; nothing was sent")
    candidates = find_candidates(
        ctx.ledger, batch_id, classifier(ctx.settings.failure_classes_path)
    )
    chosen = choose(candidates, Selection(rows=tuple(sorted(set(rows)))))

    async def refetch(client: AsyncPayoutsClient) -> tuple[list[Candidate], list[Dropped]]:
        return await refetch_parents(client, chosen, heard)

    def heard(views: Sequence[ServiceView]) -> None:
        ctx.ledger.save_service_views(batch_id, views, WordSource.RERUN)

    kept, dropped = with_client(ctx.target, refetch)
    dropped_lines = [f"row {d.candidate.row_number}: {d.reason}" for d in dropped]
    if not kept:
        return RerunStarted(None, [], dropped_lines)
    attempts = plan_attempts(ctx.ledger, kept, {}, None)
    outcome = register_rerun(ctx.ledger, batch_id, attempts, maker.name)
    rerun_id = rerun_batch_id(batch_id, [a.instruction.external_id for a in attempts])
    rows_text = ", ".join(str(c.row_number) for c in kept)
    record_action(
        ctx.ledger, maker.name, "rerun", batch_id, detail=f"rows {rows_text} as {rerun_id}"
    )
    detail = f"{RERUN_DETAIL}{batch_id}: {plural(len(kept), 'row')} {rows_text}"
    record_action(ctx.ledger, maker.name, RERUN_CREATED, rerun_id, detail=detail)
    submit(ctx.ledger, rerun_id, Actor(maker, CONSOLE))
    record_action(ctx.ledger, maker.name, "submitted", rerun_id)
    return RerunStarted(rerun_id, list(outcome.created), dropped_lines)
