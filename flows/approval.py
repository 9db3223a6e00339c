"""The pause for an operator's approval, in a subflow so the parent keeps its concurrency slot.

Prefect 3.8.8 releases a deployment's concurrency slot when its *top-level* run pauses, and
both runs have been seen to crash minutes later; a paused subflow keeps the parent's slot. The
paused run is tagged `batch:<batch_id>` so `payflow approve` can find it.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefect import flow, tags
from prefect.artifacts import create_markdown_artifact
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput

from payflow.ledger import BatchCounts
from payflow.model import canonical_amount
from payflow.paying.binding import approval_digest

APPROVAL_TIMEOUT_SECONDS = 24 * 3600


class BatchApproval(RunInput):
    """What an operator answers when a run pauses before paying. `approve` has no default, so
    a bare "Resume" is refused by the server."""

    approve: bool
    approved_by: str = ""
    # What `payflow approve` sends (payflow.approvals.resume.approval_input); the server refuses
    # fields the model lacks, so without it the CLI could not resume the run.
    approver: str = ""


class BatchStopped(Exception):
    """The batch stopped before its first payout (balance, approval); nothing was paid."""


@dataclass(frozen=True)
class Approval:
    """An approval given to a batch as it stood: the digest `check_approval` compares later."""

    batch_id: str
    digest: str
    approved_by: str


def batch_tag(batch_id: str) -> str:
    """The tag of the run that waits for the batch's approval."""
    return f"batch:{batch_id}"


def approval_markdown(counts: BatchCounts, digest: str) -> str:
    """Totals to pay, rows already settled, and the digest the approval is bound to."""
    lines = [
        f"## Batch {counts.batch_id} waits for approval",
        "",
        f"{counts.new} new rows to pay, {counts.pending} pending, "
        f"{counts.final} already final, of {counts.rows} rows.",
        "",
        "| currency | type | rows | to pay |",
        "|---|---|---|---|",
        *(
            f"| {t.currency} | {t.payment_type} | {t.rows} | {canonical_amount(t.amount)} |"
            for t in counts.to_pay
        ),
        "",
        f"Content hash `{counts.content_hash}`; approval digest `{digest}`. Any change to the "
        "batch or its totals voids this approval.",
    ]
    return "\n".join(lines)


@flow(name="await-approval", persist_result=False)
def await_approval(batch_id: str, description: str, timeout_seconds: int) -> BatchApproval:
    """Pause this subflow until an operator answers (`{"approve": true|false, ...}`)."""
    prompt = BatchApproval.with_initial_data(description=description)
    answer: BatchApproval = pause_flow_run(
        wait_for_input=prompt, timeout=timeout_seconds, key=f"approve-{batch_id}"
    )
    return answer


def request_approval(
    counts: BatchCounts, *, timeout_seconds: int = APPROVAL_TIMEOUT_SECONDS
) -> Approval:
    """Show the totals, pause in a tagged subflow, and return the approval bound to `counts`.

    Raises `BatchStopped` when the operator declines. The policy (who may approve, when a pause
    is needed at all) decides whether to call this."""
    digest = approval_digest(counts)
    description = approval_markdown(counts, digest)
    create_markdown_artifact(
        key="batch-approval",
        markdown=description,
        description="Totals to pay; resume the waiting run with approve=true to pay them.",
    )
    with tags(batch_tag(counts.batch_id)):
        answer = await_approval(counts.batch_id, description, timeout_seconds)
    if not answer.approve:
        raise BatchStopped(f"batch {counts.batch_id} was not approved; nothing was paid")
    return Approval(counts.batch_id, digest, answer.approver or answer.approved_by)
