"""Submitting a batch for approval and a checker's decision, over `payflow.approvals`."""

from __future__ import annotations

from payflow.acts import Actor, submit
from payflow.acts import decide as decide_act
from payflow.acts.actor import CONSOLE
from payflow.acts.history import GO_AHEAD
from payflow.approvals import (
    ApprovalRefused,
    ApprovalStatus,
    Approved,
    Declined,
    Expired,
    approval_status,
    person_key,
)
from payflow.approvals.store import terms_of
from payflow.console.context import ConsoleContext
from payflow.console.operators import Operator
from payflow.console.paying import awaits_approval, start_payment
from payflow.ledger.actions import last_action, record_action


def submit_for_approval(ctx: ConsoleContext, batch_id: str, maker: Operator) -> None:
    """The maker hands the batch to the checkers (recorded; the maker was set at upload)."""
    if not maker.has("maker"):
        raise ApprovalRefused("only a maker submits a batch for approval")
    facts = ctx.ledger.batch_facts(batch_id)
    if facts is None:
        raise ApprovalRefused(f"no batch {batch_id} in the ledger")
    # Another maker's batch is refused by the act (`acts.submit`); a deployed run's claim of a
    # maker (an OS name, a parameter) names nobody signed in, and any maker may submit it.
    status = approval_status(ctx.ledger, batch_id)
    if isinstance(status, Declined | Expired):
        # Submitted again, a declined batch read "awaiting approval" while no checker could
        # decide it.
        raise ApprovalRefused(f"batch {batch_id} is {type(status).__name__.lower()}")
    terms = terms_of(ctx.ledger, batch_id)
    if is_submitted(ctx, batch_id) and terms is not None and terms.maker is not None:
        # A deployed run's batch waiting with no signed-in maker is submitted here, once; so is
        # one with no terms yet (registered before the ledger kept them), which a checker's
        # decision would otherwise hold to no maker and refuse: stuck with no way on.
        raise ApprovalRefused(f"batch {batch_id} was already submitted for approval")
    if not ctx.ledger.batch_counts(batch_id).to_send:
        raise ApprovalRefused("this batch has no rows to pay; nothing to approve")
    submit(ctx.ledger, batch_id, Actor(maker, CONSOLE))
    record_action(ctx.ledger, maker.name, "submitted", batch_id)


def is_submitted(ctx: ConsoleContext, batch_id: str) -> bool:
    """True once a maker submitted the batch for approval, or while a deployment's pay run of it
    waits for its approval: a daily batch read "awaiting approval" here, and its checker's
    "Approve and pay" was refused as not submitted, so only Prefect's form could approve it."""
    if last_action(ctx.ledger, batch_id, "submitted") is not None:
        return True
    return awaits_approval(ctx, batch_id, ctx.ledger.batch_counts(batch_id))


def decide(
    ctx: ConsoleContext,
    batch_id: str,
    checker: Operator,
    *,
    approve: bool,
    note: str,
    acknowledge_warnings: bool,
) -> tuple[ApprovalStatus, str | None]:
    """Record the checker's decision; start paying once the batch is approved."""
    if not checker.has("checker"):
        raise ApprovalRefused("only a checker approves or declines a batch")
    facts = ctx.ledger.batch_facts(batch_id)
    if facts is None:
        raise ApprovalRefused(f"no batch {batch_id} in the ledger")
    if facts.made_by is not None and person_key(facts.made_by) == person_key(checker.name):
        raise ApprovalRefused(f"{checker.name} made batch {batch_id} and cannot approve it")
    if not is_submitted(ctx, batch_id):
        raise ApprovalRefused("the maker has not submitted this batch for approval yet")
    if last_action(ctx.ledger, batch_id, "approved", "declined", "pay_started") is not None:
        raise ApprovalRefused(f"batch {batch_id} was already decided")
    before = approval_status(ctx.ledger, batch_id)
    if isinstance(before, Approved) and approve:
        # Under every limit the policy asks for no step, but the console still wants a checker;
        # or approvers on the command line gave every step: this checker starts the payment
        # (recording another approval was refused as "already approved", and nothing paid it).
        # A decline is always recorded: kept only here, `payflow pay` paid the declined batch.
        status: ApprovalStatus = before
    else:
        # The act records the decision and its line in the history.
        status = decide_act(
            ctx.ledger,
            batch_id,
            Actor(checker, CONSOLE),
            approve=approve,
            note=note or None,
            acknowledge_warnings=acknowledge_warnings,
            via="console",
        )
    if not approve or not isinstance(status, Approved):
        return status, None
    if before is status and status.by:
        # Every step was given elsewhere: this checker did not approve, but started the paying.
        given = f"approved by {', '.join(status.by)} before"
        detail = f"{given}; note: {note}" if note else given
        record_action(ctx.ledger, checker.name, GO_AHEAD, batch_id, detail=detail)
    elif before is status:
        # Under every limit: no record was written, the checker's go-ahead is the approval.
        record_action(ctx.ledger, checker.name, "approved", batch_id, detail=note or None)
    started = start_payment(
        ctx, batch_id, Actor(checker, CONSOLE), acknowledge_warnings=acknowledge_warnings
    )
    return status, started
