"""The approval gate of the pay flow: ask the policy, pause in a subflow until it is satisfied.

`payflow.approvals` decides (steps, maker != checker, binding to content, expiry); this module
only waits. A batch the policy lets through goes on by itself. Otherwise the run pauses in a
subflow (`await-approval`, tagged `batch:<batch_id>`, so the parent keeps its concurrency slot:
Prefect 3.8.8 releases it when a *top-level* run pauses, and both runs then crashed). An answer
typed in the Prefect UI is recorded (through `payflow.acts.decide`, via="prefect") only with a
one-time approval code that names its checker; an answer sent by
`payflow approve` was recorded before the resume. Either way the flow then trusts
`approval_status` from the ledger, never the input itself.
"""

from __future__ import annotations

from functools import partial

from prefect import flow, get_run_logger, tags
from prefect.artifacts import create_markdown_artifact
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from pydantic import Field

from payflow.approvals import Approved, Declined, Expired
from payflow.approvals.form import with_refused_answer
from payflow.approvals.resume import PAUSE_POLL_SECONDS, batch_tag
from payflow.approvals.stops import ApprovalNeeded, BatchStopped, NotApproved
from payflow.connections import open_ledger
from payflow.ending import batch_end
from payflow.notices import approval_expired, approval_needed
from payflow.notify import Notice, tell
from payflow.settings import Settings
from payflow.tasks.approve_batch import ApprovalView, read_approval, record_answer

APPROVAL_TIMEOUT_SECONDS = 24 * 3600
DECLINE_REASON_LENGTH = 1000
APPROVAL_CODE_LENGTH = 64

__all__ = [
    "APPROVAL_TIMEOUT_SECONDS",
    "ApprovalNeeded",
    "BatchApproval",
    "BatchApprovalWithWarnings",
    "BatchStopped",
    "NotApproved",
    "await_approval",
    "batch_tag",
    "ensure_approved",
]


class BatchApproval(RunInput):
    """An approver's answer. `approve` has no default, so a bare "Resume" is refused by the
    server. Open-source Prefect records no identity, so no name typed here counts: an answer is
    recorded only with a one-time `approval_code` (`payflow approve BATCH --code`, or the
    console), which names the checker it was issued to."""

    approve: bool
    approval_code: str = Field(default="", max_length=APPROVAL_CODE_LENGTH)
    # Prefect's form shows `approve` as a switch that is off and sends false untouched: a
    # checker who typed a name and pressed Submit declined the batch for good. A decline from
    # the form therefore needs its reason here; without one it is refused and asked again.
    decline_reason: str = Field(default="", max_length=DECLINE_REASON_LENGTH)


class BatchApprovalWithWarnings(BatchApproval):
    """The answer when the batch has warnings: approving must acknowledge them explicitly."""

    acknowledge_warnings: bool


@flow(name="await-approval", persist_result=False)
def await_approval(
    batch_id: str, description: str, timeout_seconds: int, warnings: bool, step: int
) -> BatchApproval:
    """Pause this subflow until someone answers; one pause key per step."""
    model = BatchApprovalWithWarnings if warnings else BatchApproval
    answer: BatchApproval = pause_flow_run(
        wait_for_input=model.with_initial_data(description=description),
        timeout=timeout_seconds,
        # Often enough that `payflow approve` can see the run went on before it answers.
        poll_interval=PAUSE_POLL_SECONDS,
        key=f"approve-{batch_id}-{step}",
    )
    return answer


def _settled(view: ApprovalView, batch_id: str, wait: bool) -> Approved | None:
    """Approved: go on; None: wait; raises when the batch will not be paid."""
    status = view.status
    if isinstance(status, Approved):
        return status
    if isinstance(status, Declined):
        why = f" ({status.note})" if status.note else ""
        raise NotApproved(
            f"batch {batch_id} was declined by {status.by}{why}; nothing was paid", "Declined"
        )
    if isinstance(status, Expired):
        raise NotApproved(
            f"batch {batch_id}: its approval expired at {status.expired_at}; nothing was paid",
            "Expired",
        )
    if not wait:
        raise ApprovalNeeded.of(batch_id, status)
    return None


def _end_artifact(ledger_url: str, batch_id: str) -> None:
    """The run's artifact of a declined or expired batch: what happened and what to do next
    (the same words as `payflow status`)."""
    end = batch_end(open_ledger(ledger_url), batch_id)
    if end is not None:
        create_markdown_artifact(
            key="batch-end",
            markdown=f"**Batch {batch_id}: {end.name}.** {end.said}.\n\nNext: {end.next_step}",
            description="How the batch ended, and what to do next.",
        )


def _needed(ledger_url: str, batch_id: str, steps: int, seconds: int) -> Notice:
    return approval_needed(open_ledger(ledger_url), batch_id, steps, seconds)


def _expired(ledger_url: str, batch_id: str, why: str) -> Notice:
    return approval_expired(open_ledger(ledger_url), batch_id, why)


def ensure_approved(
    ledger_url: str,
    batch_id: str,
    *,
    wait: bool,
    timeout_seconds: int = APPROVAL_TIMEOUT_SECONDS,
) -> Approved:
    """Return once the ledger says the batch is approved, pausing for answers when `wait`.

    Raises `BatchStopped` (declined, expired, no answer in time) or, when not `wait`,
    `ApprovalNeeded`."""
    logger = get_run_logger()
    step = 0
    refused: str | None = None  # why the last answer typed in the form was not recorded
    while True:
        view = read_approval(ledger_url, batch_id)
        try:
            approved = _settled(view, batch_id, wait)
        except NotApproved:
            _end_artifact(ledger_url, batch_id)
            raise
        if approved is not None:
            return approved
        step += 1
        form = with_refused_answer(view.form, refused)
        create_markdown_artifact(
            key="batch-approval",
            markdown=form,
            description="The batch waits for approval: payflow approve BATCH_ID, or resume "
            "the paused await-approval run.",
        )
        timeout = max(1, min(timeout_seconds, view.seconds_left))
        if step == 1:  # once per run: an answer refused asks again without a new message
            steps = getattr(view.status, "steps_left", 1)
            tell(Settings(), partial(_needed, ledger_url, batch_id, steps, timeout))
        try:
            with tags(batch_tag(batch_id)):
                answer = await_approval(batch_id, form, timeout, view.has_warnings, step)
        except FlowPauseTimeout:
            expired = isinstance(read_approval(ledger_url, batch_id).status, Expired)
            why = "nobody approved it in time" if expired else f"no answer within {timeout} s"
            tell(Settings(), partial(_expired, ledger_url, batch_id, why))
            if expired:
                _end_artifact(ledger_url, batch_id)
                raise NotApproved(f"batch {batch_id}: {why}; nothing was paid", "Expired") from None
            raise BatchStopped(f"batch {batch_id}: {why}; nothing was paid") from None
        refused = record_answer(
            ledger_url,
            batch_id,
            approve=answer.approve,
            approval_code=answer.approval_code,
            acknowledge_warnings=bool(getattr(answer, "acknowledge_warnings", False)),
            decline_reason=answer.decline_reason,
        )
        if refused:
            logger.warning("approval answer not recorded: %s", refused)
