"""`payflow approve`'s work: record the decision, then resume the batch's paused run if it is
settled (approved by every step needed, or declined)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from payflow.approvals.status import ApprovalStatus, Approved, Declined
from payflow.ledger import Ledger

if TYPE_CHECKING:
    from payflow.acts.actor import Actor
    from payflow.approvals.resume import Replaced
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
    # What pays the batch when no paused run went on (its run died): `watchdog.approved`.
    going_on: str | None = None


def prefect_api_configured() -> bool:
    """True when a Prefect server is configured (otherwise there is no run to resume)."""
    from prefect.settings import get_current_settings

    return get_current_settings().api.url is not None


def decide(
    checker: Actor,
    ledger: Ledger,
    batch_id: str,
    settings: Settings,
    *,
    decline: bool = False,
    note: str | None = None,
    acknowledge_warnings: bool = False,
) -> DecisionOutcome:
    """Record the signed-in checker's decision (the act: `payflow.acts.decide`); resume the
    paused run once the decision settles it, or, if its run died, resume the batch as the
    watchdog does (`watchdog.approved`)."""
    from payflow.acts.decide import decide as decide_act

    approver = checker.name
    status = decide_act(
        ledger,
        batch_id,
        checker,
        approve=not decline,
        note=note,
        acknowledge_warnings=acknowledge_warnings,
        via="cli",
    )
    outcome = DecisionOutcome(approver, status)
    if not isinstance(status, Approved | Declined):
        return outcome  # more steps needed: the run stays paused for the next approver
    if not prefect_api_configured():
        # No server, no paused run: a `payflow run` that waited for approval has ended.
        return outcome
    # Here, not at the top: resuming loads Prefect's client (seconds of CPU), which a decision
    # that settles nothing, or a refusal, does without.
    from payflow.approvals.resume import resume_paused_runs

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
    started = any(replaced.started for replaced in outcome.replaced)
    if isinstance(status, Approved) and not outcome.resumed and not started:
        from payflow.watchdog.approved import going_on

        outcome.going_on = going_on(settings, ledger, batch_id)
    return outcome
