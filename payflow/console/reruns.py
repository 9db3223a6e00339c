"""A maker reruns chosen failed rows, with corrected details when the service could not pay
them as they were: `payflow.rerun`'s steps (the corrections checked by the batch rules, as
`payflow rerun --corrections` checks them), then the rerun batch waits for a checker."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from payflow.acts import Actor
from payflow.acts.actor import CONSOLE
from payflow.acts.rerun import rerun
from payflow.api import AsyncPayoutsClient
from payflow.approvals.store import active_policy
from payflow.connections import with_client
from payflow.console.context import ConsoleContext
from payflow.console.operators import Operator
from payflow.intake import RawBatch, ValidationReport
from payflow.ledger import NewAttempt, ServiceView, WordSource
from payflow.ledger.actions import record_action
from payflow.rerun import (
    Candidate,
    Correction,
    Dropped,
    RerunRefused,
    Selection,
    choose,
    classifier,
    correction_lines,
    find_candidates,
    plan_attempts,
    refetch_parents,
)
from payflow.rerun.checking import validate_with_lookups
from payflow.rerun.corrections import CORRECTABLE
from payflow.rerun.preview import approval_line

READ_REASONS = "confirm that you read why the rows failed; nothing was sent"
CHOOSE = "choose rows or groups to rerun; nothing was sent"


@dataclass(frozen=True)
class RerunChoice:
    """What the rerun form holds: the rows chosen, the box ticked, and new details per row
    (column -> text, only the fields the maker filled in: requisites, bankName, name)."""

    rows: tuple[int, ...] = ()
    reasons_read: bool = False
    fixes: Mapping[int, Mapping[str, str]] = field(default_factory=dict)

    def fix(self, row: int, column: str) -> str:
        """The new text the maker typed for this row's column ("" when none)."""
        return self.fixes.get(row, {}).get(column, "")


def rerun_choice(values: Mapping[str, str], rows: Sequence[str]) -> RerunChoice:
    """The form's choice: `row` values, `reasons_read`, and `fix-<row>-<column>` fields."""
    chosen = tuple(sorted({int(v) for v in rows if v.isdigit()}))
    fixes: dict[int, dict[str, str]] = {}
    for key, value in values.items():
        parts = key.split("-", 2)
        if len(parts) != 3 or parts[0] != "fix" or not parts[1].isdigit():
            continue
        row, column, text = int(parts[1]), parts[2], value.strip()
        if column in CORRECTABLE and text and row in chosen:
            fixes.setdefault(row, {})[column] = text[:255]
    return RerunChoice(chosen, values.get("reasons_read") == "yes", fixes)


@dataclass(frozen=True)
class RerunReview:
    """What the maker reads before submitting: the rows, each change, and who approves."""

    rows: list[Candidate]
    changes: list[str]
    approval: str


@dataclass(frozen=True)
class RerunStarted:
    """The rerun batch registered (None when every chosen row was dropped) and what was dropped."""

    rerun_batch_id: str | None
    created: list[str]
    dropped: list[str]


def _chosen(
    ctx: ConsoleContext, batch_id: str, maker: Operator, choice: RerunChoice
) -> list[Candidate]:
    if not maker.has("maker"):
        raise RerunRefused("only a maker reruns rows")
    if not choice.rows:
        raise RerunRefused(CHOOSE)
    if not choice.reasons_read:
        raise RerunRefused(READ_REASONS)
    candidates = find_candidates(
        ctx.ledger, batch_id, classifier(ctx.settings.failure_classes_path)
    )
    return choose(candidates, Selection(rows=choice.rows))


def _corrections(chosen: Sequence[Candidate], choice: RerunChoice) -> dict[str, Correction]:
    """The typed details as a corrections file would give them, by the row's latest attempt."""
    named = {"requisites": "requisites", "bankName": "bank_name", "name": "name"}
    return {
        c.external_id: Correction(
            c.external_id, {named[k]: v for k, v in choice.fixes[c.row_number].items()}, {}
        )
        for c in chosen
        if choice.fixes.get(c.row_number)
    }


def _attempts(
    ctx: ConsoleContext, chosen: Sequence[Candidate], choice: RerunChoice
) -> list[NewAttempt]:
    """The next attempt of each row, corrected and checked by the batch rules with the
    service's lists, exactly as `payflow rerun --corrections` plans them."""

    def validate(raw: RawBatch) -> ValidationReport:
        async def check(client: AsyncPayoutsClient) -> ValidationReport:
            return await validate_with_lookups(client, raw)

        return with_client(ctx.target, check)

    return plan_attempts(ctx.ledger, chosen, _corrections(chosen, choice), validate)


def review_rerun(
    ctx: ConsoleContext, batch_id: str, maker: Operator, choice: RerunChoice
) -> RerunReview:
    """The rerun as it would be submitted: nothing is written or sent. RerunRefused when the
    choice is incomplete or a correction breaks the batch rules."""
    chosen = _chosen(ctx, batch_id, maker, choice)
    if not chosen:
        raise RerunRefused("none of the chosen rows can be sent again now; nothing was sent")
    attempts = _attempts(ctx, chosen, choice)
    parents = {c.external_id: ctx.ledger.payout_instruction(c.external_id) for c in chosen}
    changes = correction_lines({k: v for k, v in parents.items() if v is not None}, attempts)
    approval = approval_line(chosen, active_policy(ctx.ledger).policy, console=True)
    return RerunReview(chosen, changes, approval)


def rerun_rows(
    ctx: ConsoleContext, batch_id: str, maker: Operator, choice: RerunChoice
) -> RerunStarted:
    """Register the chosen rows' next attempts (corrected as chosen) as a rerun batch
    submitted for approval."""
    chosen = _chosen(ctx, batch_id, maker, choice)

    async def refetch(client: AsyncPayoutsClient) -> tuple[list[Candidate], list[Dropped]]:
        return await refetch_parents(client, chosen, heard, sandbox=ctx.target.sandbox)

    def heard(views: Sequence[ServiceView]) -> None:
        ctx.ledger.save_service_views(batch_id, views, WordSource.RERUN)

    kept, dropped = with_client(ctx.target, refetch)
    dropped_lines = [f"row {d.candidate.row_number}: {d.reason}" for d in dropped]
    if not kept:
        return RerunStarted(None, [], dropped_lines)
    attempts = _attempts(ctx, kept, choice)
    corrected = [c.row_number for c in kept if choice.fixes.get(c.row_number)]
    outcome = rerun(ctx.ledger, batch_id, attempts, Actor(maker, CONSOLE), corrected=corrected)
    rerun_id = outcome.batch_id
    # Submitted here: the console asks a checker of every batch a maker submits in it.
    record_action(ctx.ledger, maker.name, "submitted", rerun_id)
    return RerunStarted(rerun_id, list(outcome.created), dropped_lines)
