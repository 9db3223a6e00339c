"""The rerun-failed flow: reviewed failed rows of a batch sent again as new, linked attempts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.client.schemas.objects import State
from prefect.states import Failed

from payflow.acts.context import signed_in_here
from payflow.approvals.identity import deployment_maker, names_nobody, worker_account_note
from payflow.connections import ledger_url_parameter, run_target
from payflow.expected import ExpectedFailure, quiet_expected_failures
from payflow.flows.approval import APPROVAL_TIMEOUT_SECONDS, ApprovalNeeded, NotApproved
from payflow.flows.pay_batch import pay_batch, pay_result
from payflow.ledger import BatchCounts
from payflow.paying.run_end import NOT_ALL_PAID
from payflow.rerun import DEPLOYMENT_WORDS, RerunRefused, choose, parse_selection, preview_lines
from payflow.settings import Settings
from payflow.tasks.approve_batch import submit_in_flow
from payflow.tasks.connections import RunTarget, open_ledger
from payflow.tasks.rerun_failed import (
    find_rerun_candidates,
    plan_rerun,
    refetch_rerun_parents,
    register_rerun_attempts,
    rerun_batches_to_pay,
)
from payflow.wording import counted, state_words

SHOWN_ATTEMPTS = 10


@dataclass
class RerunResult:
    """What a rerun did (or, unreviewed, would do), read from the ledger at the end."""

    batch_id: str
    reviewed: bool
    preview: list[str]
    dropped: list[str] = field(default_factory=list)  # "row N (externalId): why"
    created: list[str] = field(default_factory=list)
    already_created: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    paid_batches: list[str] = field(default_factory=list)
    waiting: dict[str, str] = field(default_factory=dict)  # rerun batch -> what it waits for
    statuses: dict[str, int] = field(default_factory=dict)  # by each root's latest attempt
    sandbox: bool = False
    chosen: int = 0  # failed rows the choice matched
    # Set when no `maker` named a person: says the recorded maker is the worker's account.
    maker_note: str | None = None

    @property
    def all_paid(self) -> bool:
        """Every row of the batch COMPLETED by its latest attempt and no rerun batch waiting:
        `payflow rerun` exits 0 and the deployed run ends Completed only then."""
        return set(self.statuses) <= {"COMPLETED"} and not self.waiting

    def unpaid_line(self) -> str:
        """`1 of 6 rows not paid by latest attempt (FAILED 1): payflow status BATCH`, and each
        rerun batch still waiting (declined or expired)."""
        counts = BatchCounts(self.batch_id, self.statuses)
        parts = [f"{counts.unpaid_line()} by latest attempt: payflow status {self.batch_id}"]
        parts += [f"rerun batch {rerun} is {why}" for rerun, why in sorted(self.waiting.items())]
        return "; ".join(parts)


class RerunNotAllPaid(ExpectedFailure):
    """A reviewed rerun went to its end and some row of the batch is still not paid; `result`
    says what it did. The Failed state's data, as `pay_batch`'s `NotAllPaid`."""

    def __init__(self, message: str, result: RerunResult) -> None:
        super().__init__(message)
        self.result = result


def rerun_result(state: State[Any]) -> RerunResult:
    """What a rerun run called with `return_state=True` did, red or green; re-raises what
    stopped it before its end."""
    done = state.result(raise_on_failure=False)
    if isinstance(done, RerunNotAllPaid):
        return done.result
    if isinstance(done, BaseException):
        raise done
    if not isinstance(done, RerunResult):
        raise RuntimeError(f"rerun run ended {state.name} without a result: {state.message}")
    return done


@flow(name="rerun-failed", persist_result=False, log_prints=False)
def rerun_failed(
    batch_id: str,
    rows: str = "",
    message: str | None = None,
    failure_class: str | None = None,
    all_failed: bool = False,
    reviewed: bool = False,
    corrections: str | None = None,
    maker: str | None = None,
    api_url: str | None = None,
    sandbox: bool = False,
    callback_url: str | None = None,
    ledger_url: str | None = None,
    wait_for_approval: bool = True,
    approval_timeout_seconds: int = APPROVAL_TIMEOUT_SECONDS,
) -> RerunResult | State[RerunResult]:
    """Preview (unreviewed) or rerun the chosen failed rows of a batch, then pay each rerun
    batch through `pay_batch`: the same approval (pausing unless `wait_for_approval` is
    False), balance check, submit, track, reconcile and report as any batch. The rerun batch's
    maker (who may not approve it) is `maker`, the person who asked for the rerun (the
    command line passes its operator); without one, this worker's account (`deployment_maker`),
    which the summary and the log say is not a person. A reviewed rerun after which some row is
    still not paid ends Failed (`NOT_ALL_PAID`, as `payflow rerun` exits 1): it read Completed
    whatever became of the rows it sent; read either end with `rerun_result`."""
    quiet_expected_failures()
    settings = Settings()
    made_by = deployment_maker(settings, maker)
    maker_note = worker_account_note(made_by) if names_nobody(maker) else None
    # Read by an operator in Prefect's UI, who answers with the deployment's parameters; the
    # command line checked its flags before it called this flow.
    selection = parse_selection(rows, message, failure_class, all_failed, DEPLOYMENT_WORDS)
    with _target(settings, api_url, sandbox, callback_url, ledger_url) as target:
        # Checked before anything is read or written: the pay runs below must pay from the
        # ledger the failed rows are read from.
        pay_ledger_url = ledger_url_parameter(target.ledger_url, settings)
        candidates = find_rerun_candidates(target.ledger_url, batch_id)
        chosen = choose(candidates, selection)
        preview = preview_lines(candidates, chosen, selection, sending=reviewed)
        result = RerunResult(batch_id, reviewed, preview)
        result.sandbox = target.sandbox
        result.chosen = len(chosen)
        result.maker_note = maker_note
        if not reviewed:
            result.preview = preview_lines(candidates, chosen, selection, DEPLOYMENT_WORDS)
            create_markdown_artifact(key="rerun-preview", markdown=_markdown(result.preview))
            return result
        if selection.empty:
            raise RerunRefused(DEPLOYMENT_WORDS.choose)
        kept, dropped = refetch_rerun_parents(target, chosen, batch_id)
        result.dropped = [
            f"row {d.candidate.row_number} ({d.candidate.external_id}): {d.reason}" for d in dropped
        ]
        if kept:
            attempts = plan_rerun(target, kept, corrections)
            # The act: as the command line's signed-in maker running this flow in its process;
            # a deployed run has none (no parameter names an authenticated person).
            outcome = register_rerun_attempts(
                target.ledger_url, batch_id, attempts, signed_in_here(), made_by
            )
            if maker_note and outcome.created:
                get_run_logger().warning("rerun of batch %s: %s", batch_id, maker_note)
            result.created = outcome.created
            result.already_created = outcome.already_created
            result.refused = outcome.refused
        for rerun_id in rerun_batches_to_pay(target.ledger_url, batch_id):
            # The act: submitted by the command line's signed-in maker, else with no maker
            # (a maker submits it before a checker may approve it).
            submit_in_flow(target.ledger_url, rerun_id, made_by)
            try:
                pay_result(
                    pay_batch(
                        rerun_id,
                        ledger_url=pay_ledger_url,
                        api_url=target.api_url,
                        sandbox=target.sandbox,
                        callback_url=target.callback_url,
                        wait_for_approval=wait_for_approval,
                        approval_timeout_seconds=approval_timeout_seconds,
                        return_state=True,
                    )
                )
            except (ApprovalNeeded, NotApproved) as stopped:
                result.waiting[rerun_id] = stopped.status_name
            else:
                result.paid_batches.append(rerun_id)
        result.statuses = open_ledger(target.ledger_url).latest_summary(batch_id)
    create_markdown_artifact(key="rerun-summary", markdown=_markdown(summary_lines(result)))
    if result.all_paid:
        return result
    unpaid = result.unpaid_line()
    return Failed(name=NOT_ALL_PAID, message=unpaid, data=RerunNotAllPaid(unpaid, result))


@contextmanager
def _target(
    settings: Settings,
    api_url: str | None,
    sandbox: bool,
    callback_url: str | None,
    ledger_url: str | None,
) -> Iterator[RunTarget]:
    """The run's target; an explicit ledger URL (a test's, another worker's) wins."""
    with run_target(settings, api_url, sandbox, callback_url) as target:
        yield replace(target, ledger_url=ledger_url) if ledger_url else target


def summary_lines(result: RerunResult) -> list[str]:
    """The rerun's outcome as an operator reads it (also the flow's summary artifact)."""
    lines = [f"rerun of batch {result.batch_id}"]
    if result.maker_note and result.created:
        lines.append(f"  {result.maker_note}")
    lines += [f"  dropped {line}" for line in result.dropped]
    if result.created:
        created = counted(len(result.created), "new attempt")
        more = len(result.created) - SHOWN_ATTEMPTS
        lines.append(
            f"  {created}: {', '.join(result.created[:SHOWN_ATTEMPTS])}"
            + (f" and {more} more" if more > 0 else "")
        )
    if result.already_created:
        lines.append(f"  already registered: {counted(len(result.already_created), 'attempt')}")
    lines += [f"  not rerun: {parent} {why}" for parent, why in sorted(result.refused.items())]
    # Sent, not necessarily paid: what became of each row is under "rows by latest attempt".
    lines += [f"  sent rerun batch {rerun_id}" for rerun_id in result.paid_batches]
    acted = result.dropped or result.created or result.already_created or result.refused
    if not acted and not result.paid_batches and not result.waiting:
        if result.chosen:
            lines.append("  nothing to send: no chosen row is still failed; nothing was sent")
        else:  # a mistyped message or class matched nothing: not the same as "already fine"
            lines.append("  nothing to send: no failed row matches the choice; nothing was sent")
    for rerun_id, status in sorted(result.waiting.items()):
        lines.append(
            f"  rerun batch {rerun_id} is {status}: payflow approve {rerun_id}, "
            f"then payflow pay {rerun_id}"
        )
    lines.append("  rows by latest attempt:")
    lines += [f"    {state_words(state):<16} {n}" for state, n in sorted(result.statuses.items())]
    return lines


def _markdown(lines: list[str]) -> str:
    return "```\n" + "\n".join(lines) + "\n```"
