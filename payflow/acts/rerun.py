"""Rerunning a batch's reviewed failed rows: the one place that registers their next attempts as
a rerun batch, records who asked for it, and submits it for approval as theirs."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from payflow.acts.actor import Actor
from payflow.acts.history import RERUN_CREATED, RERUN_DETAIL
from payflow.acts.register import submit
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action
from payflow.ledger.attempts import AttemptsOutcome, NewAttempt
from payflow.rerun.plan import register_rerun
from payflow.wording import plural

RERUN = "rerun"
NO_MAKER = "a deployed run"  # the history's actor of a rerun nobody signed in for


def rerun(
    ledger: Ledger,
    batch_id: str,
    attempts: Sequence[NewAttempt],
    maker: Actor | None,
    *,
    claimed: str | None = None,
    corrected: Collection[int] = (),
) -> AttemptsOutcome:
    """Register `attempts` as the batch's rerun batch and submit it, as `maker`'s (None: a
    deployed run nobody signed in for, which keeps `claimed` as its recorded maker; a maker
    submits it before a checker may approve it). `corrected`: source rows whose details the
    maker changed, said in the history. NotAllowed for an actor who is not a maker."""
    if maker is not None:
        maker.require("maker", "reruns rows")
    who = maker.name if maker is not None else claimed
    outcome = register_rerun(ledger, batch_id, attempts, who)
    created = set(outcome.created)
    rows = [a.instruction.row_number for a in attempts if a.instruction.external_id in created]
    if rows:
        actor = who or NO_MAKER
        listed = ", ".join(map(str, rows))
        fixed = sorted(set(corrected) & set(rows))
        also = (
            f"; details corrected in {plural(len(fixed), 'row')} {', '.join(map(str, fixed))}"
            if fixed
            else ""
        )
        rerun_id = outcome.batch_id
        record_action(ledger, actor, RERUN, batch_id, detail=f"rows {listed} as {rerun_id}{also}")
        detail = f"{RERUN_DETAIL}{batch_id}: {plural(len(rows), 'row')} {listed}{also}"
        record_action(ledger, actor, RERUN_CREATED, rerun_id, detail=detail)
        submit(ledger, rerun_id, maker, claimed=claimed)
    return outcome
