"""The daily run: every new file in the inbox folder becomes its own batch with its own pay run.

Each file is registered (intake, a subflow), then its batch gets a pay run of the `pay-batch`
deployment that waits for its own approval, so one paused, declined or broken batch holds up
none of the others. The file leaves the inbox only after that (see `payflow.inbox`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from payflow.approvals.identity import dropped_by, file_maker, file_maker_note
from payflow.expected import ExpectedFailure, quiet_expected_failures
from payflow.flows.intake_batch import intake_batch
from payflow.inbox import (
    QUIET_SECONDS,
    QUIET_WAIT_SECONDS,
    InboxOutcome,
    Settled,
    inbox_markdown,
    still_written,
    waiting_files,
)
from payflow.intake.problems import BatchFileError
from payflow.notices import inbox_file_failed
from payflow.notify import tell
from payflow.runtime import ConfigurationError
from payflow.settings import Settings
from payflow.storage import LocalStorage, Storage, place_name, storage_at
from payflow.tasks.approve_batch import submit_in_flow
from payflow.tasks.inbox import settle_inbox_file, start_pay_run

PAY_DEPLOYMENT = "pay-batch/pay-batch"


class InboxFilesFailed(ExpectedFailure):
    """Some inbox files could not become batches; the others went on."""


@flow(name="daily-payouts", persist_result=False, log_prints=False)
def daily_payouts(
    inbox: str,
    pay_deployment: str = PAY_DEPLOYMENT,
    quiet_seconds: float = QUIET_SECONDS,
    quiet_wait_seconds: float = QUIET_WAIT_SECONDS,
    maker: str | None = None,
) -> list[InboxOutcome]:
    """Register each inbox file as a batch and start its pay run; move it to `processed/`, or to
    `failed/` with `<file>.why.txt`. A file still being written stays for the next run. Ends
    FAILED (after every file) when any file failed or stayed. Each batch's maker is its file's
    owner, or `maker` for a file the worker's own user owns (`file_maker`); without `maker` such
    a batch is made by the worker's account, which the summary and the log say is no person."""
    quiet_expected_failures()
    folder = storage_at(inbox)
    names = [e.name for e in waiting_files(folder)]
    busy: list[str] = []
    if isinstance(folder, LocalStorage):  # a remote object appears whole: nothing to wait for
        paths = still_written([folder.place(n) for n in names], quiet_seconds, quiet_wait_seconds)
        busy = [p.name for p in paths]
    settings = Settings()  # read once: each file's maker falls back to the worker's user
    outcomes = [
        _take_file(folder, name, pay_deployment, maker, settings)
        for name in names
        if name not in busy
    ]
    outcomes += [
        InboxOutcome(
            name,
            Settled.LEFT,
            reason=f"still being written {quiet_wait_seconds:g} s after the run found it; "
            "left for the next run (copy a file elsewhere first, then move it into the inbox)",
        )
        for name in busy
    ]
    create_markdown_artifact(key="daily-payouts", markdown=inbox_markdown(folder.url, outcomes))
    trouble = [o for o in outcomes if o.settled is not Settled.PROCESSED]
    if trouble:
        listed = ", ".join(o.file for o in trouble)
        raise InboxFilesFailed(f"{len(trouble)} of {len(outcomes)} inbox files not paid: {listed}")
    return outcomes


def _take_file(
    folder: Storage, name: str, pay_deployment: str, maker: str | None, settings: Settings
) -> InboxOutcome:
    """Take one inbox file: a local one where it is, a remote one from a private local copy
    (whose owner is this worker: its maker is then the deployment's `maker`)."""
    if isinstance(folder, LocalStorage):
        return _take_local(folder, folder.place(name), pay_deployment, maker, settings)
    with tempfile.TemporaryDirectory(prefix="payflow-inbox-") as copy:  # 0700
        local = Path(copy) / name
        try:
            folder.fetch(name, local)
        except OSError as exc:  # storage out of reach or the file gone: the next run tries
            reason = f"not read from {folder.place(name)}: {exc}"
            get_run_logger().warning("%s stays in the inbox: %s", name, reason)
            return InboxOutcome(name, Settled.LEFT, reason=reason)
        return _take_local(folder, local, pay_deployment, maker, settings)


def _take_local(
    folder: Storage, path: Path, pay_deployment: str, maker: str | None, settings: Settings
) -> InboxOutcome:
    logger = get_run_logger()
    # Read before intake, while the file is still in the inbox with its owner.
    maker_note = file_maker_note(path, settings, maker)
    owner, claimed = dropped_by(path), file_maker(path, settings, maker)
    try:
        intake = intake_batch(str(path), made_by=claimed)
    except BatchFileError as exc:
        moved = settle_inbox_file(folder.url, path.name, Settled.FAILED, str(exc))
        _tell_failed(settings, path.name, str(exc), moved)
        return InboxOutcome(path.name, Settled.FAILED, reason=str(exc), moved_to=place_name(moved))
    except ConfigurationError as exc:  # the worker's settings: its message names the one to fix
        logger.warning("%s stays in the inbox: %s", path.name, exc)
        return InboxOutcome(path.name, Settled.LEFT, reason=f"intake stopped: {exc}")
    except Exception as exc:  # not the file's fault (ledger, API): the next run tries again
        logger.warning("%s stays in the inbox: intake stopped (%s)", path.name, type(exc).__name__)
        return InboxOutcome(path.name, Settled.LEFT, reason=f"intake stopped: {type(exc).__name__}")
    counts = intake.counts
    if counts.rows and counts.rejected == counts.rows:
        why = f"every one of its {counts.rows} rows was rejected; see {intake.rejects_csv}"
        moved = settle_inbox_file(folder.url, path.name, Settled.FAILED, why)
        _tell_failed(settings, path.name, why, moved)
        return InboxOutcome(
            path.name, Settled.FAILED, intake.batch_id, reason=why, moved_to=place_name(moved)
        )
    submit_in_flow(settings.ledger_url_or_default(), intake.batch_id, claimed, owner)
    if maker_note:
        logger.warning("%s (batch %s): %s", path.name, intake.batch_id, maker_note)
    try:
        run_id = start_pay_run(pay_deployment, intake.batch_id)
    except Exception as exc:  # the batch is registered; the next run starts its pay run
        reason = f"pay run not started: {type(exc).__name__}"
        logger.warning("%s stays in the inbox: %s", path.name, reason)
        return InboxOutcome(
            path.name, Settled.LEFT, intake.batch_id, reason=reason, maker_note=maker_note
        )
    moved = settle_inbox_file(folder.url, path.name, Settled.PROCESSED)
    return InboxOutcome(
        path.name,
        Settled.PROCESSED,
        intake.batch_id,
        run_id,
        maker_note=maker_note,
        moved_to=place_name(moved),
    )


def _tell_failed(settings: Settings, name: str, why: str, moved: str) -> None:
    """Tell the maker their file failed: the note's first line, and where the whole note is."""
    first = why.strip().splitlines()[0] if why.strip() else "see the note"
    tell(settings, lambda: inbox_file_failed(name, first, f"{moved}.why.txt"))
