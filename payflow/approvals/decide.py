"""`payflow approve`'s work: record the decision, then resume the batch's paused run if it is
settled (approved by every step needed, or declined)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from payflow.approvals.identity import current_user
from payflow.approvals.policy import load_policy
from payflow.approvals.resume import Replaced, resume_paused_runs
from payflow.approvals.status import (
    ApprovalStatus,
    Approved,
    Declined,
    record_decision,
)
from payflow.ledger import Ledger
from payflow.settings import Settings


@dataclass
class DecisionOutcome:
    """The status after the decision, the paused runs that went on with it, and those found
    dead (their process had stopped) and replaced."""

    approver: str
    status: ApprovalStatus
    resumed: list[str] = field(default_factory=list)
    replaced: list[Replaced] = field(default_factory=list)
    resume_problem: str | None = None


def prefect_api_configured() -> bool:
    """True when a Prefect server is configured (otherwise there is no run to resume)."""
    from prefect.settings import get_current_settings

    return get_current_settings().api.url is not None


def decide(
    settings: Settings,
    ledger: Ledger,
    batch_id: str,
    *,
    decline: bool = False,
    note: str | None = None,
    acknowledge_warnings: bool = False,
) -> DecisionOutcome:
    """Record the approver's decision; resume the paused run once the decision settles it."""
    approver = current_user(settings)
    policy = load_policy(settings.approvals_file)
    status = record_decision(
        ledger,
        batch_id,
        approver=approver,
        decision="decline" if decline else "approve",
        note=note,
        acknowledge_warnings=acknowledge_warnings,
        policy=policy,
    )
    outcome = DecisionOutcome(approver, status)
    if not isinstance(status, Approved | Declined):
        return outcome  # more steps needed: the run stays paused for the next approver
    if not prefect_api_configured():
        # No server, no paused run: a `payflow run` that waited for approval has ended.
        return outcome
    try:
        resumed = asyncio.run(
            resume_paused_runs(
                batch_id,
                isinstance(status, Approved),
                approver,
                acknowledge_warnings and not decline,
            )
        )
        outcome.resumed, outcome.replaced = resumed.went_on, resumed.replaced
    except Exception as exc:  # the decision is recorded; the run can still be resumed by hand
        outcome.resume_problem = f"could not resume the paused run ({type(exc).__name__})"
    return outcome
