"""The watchdog deployment: every few minutes, find batches whose pay run died and resume each
once, or open a finding (see `payflow.watchdog`). It ends Failed ("Not resumed") when a batch
could not be resumed, so Prefect's view and its automations show it."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.client.schemas.objects import State
from prefect.states import Failed

from payflow.expected import ExpectedFailure, quiet_expected_failures
from payflow.runtime import open_ledger
from payflow.settings import Settings
from payflow.watchdog import Verdict, Watched, run_watchdog
from payflow.watchdog.report import watch_markdown

NOT_RESUMED = "Not resumed"


class BatchesNotResumed(ExpectedFailure):
    """Some batch's run died and could not be resumed; an open finding says why."""


@flow(name="watchdog", persist_result=False, log_prints=False)
def watchdog() -> list[Watched] | State[list[Watched]]:
    """Look at every batch with unfinished rows once; resume dead runs, open findings."""
    quiet_expected_failures()
    settings = Settings()
    logger = get_run_logger()
    with open_ledger(settings) as ledger:
        watched = run_watchdog(settings, ledger, with_prefect=True)
    for one in watched:
        logger.info("batch %s: %s", one.batch_id, one.line)
    create_markdown_artifact(key="watchdog", markdown=watch_markdown(watched))
    stuck = [w for w in watched if w.verdict is Verdict.NOT_RESUMED]
    if not stuck:
        return watched
    line = "; ".join(f"{w.batch_id} {w.line}" for w in stuck)
    return Failed(name=NOT_RESUMED, message=line, data=BatchesNotResumed(line))
