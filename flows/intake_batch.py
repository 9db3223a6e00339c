"""Intake: a batch file becomes a batch in the ledger. Everything after starts from its id."""

from __future__ import annotations

from prefect import flow

from payflow.approvals.identity import current_user
from payflow.connections import run_target
from payflow.expected import quiet_expected_failures
from payflow.intake.kept import fetches_lists
from payflow.intake.report_files import summary_lines
from payflow.run_results import IntakeResult
from payflow.settings import Settings
from payflow.tasks.count_batch import count_batch
from payflow.tasks.read_batch import read_batch
from payflow.tasks.register_rows import register_rows
from payflow.tasks.resolve_banks import (
    keep_lookups,
    load_services,
    prefetched,
    resolve_banks,
    sbp_phones,
    validate_kept,
)
from payflow.tasks.validate_batch import validate_batch
from payflow.tasks.write_report import write_rejects

BANK_LOOKUPS_IN_FLIGHT = 16


@flow(name="intake-batch", persist_result=False, log_prints=False)
def intake_batch(
    path: str,
    sheet: str | None = None,
    strict: bool = False,
    out_dir: str | None = None,
    api_url: str | None = None,
    sandbox: bool = False,
    bank_lookups_in_flight: int | None = None,
    made_by: str | None = None,
) -> IntakeResult:
    """Read, resolve SBP banks, validate, register every row, write the rejects report; return
    the batch id with its figures read from the ledger. `made_by` (the maker; None: the
    settings' user, else the OS user) is recorded once and may never approve the batch."""
    quiet_expected_failures()
    settings = Settings()
    maker = made_by or current_user(settings)
    in_flight = bank_lookups_in_flight or min(settings.max_in_flight, BANK_LOOKUPS_IN_FLIGHT)
    with run_target(settings, api_url, sandbox) as target:
        raw = read_batch(path, sheet)
        if fetches_lists(settings, sandbox=target.sandbox):
            phones = sbp_phones(raw)
            services = load_services(target)
            banks = resolve_banks(target, phones, concurrency=in_flight)
            keep_lookups(target.ledger_url, services, banks)
            report = validate_batch(
                raw, services=services, banks_for_phones=prefetched(banks), strict=strict
            )
        else:
            # A maker's process without the token: the lists a paying process kept; what they
            # cannot check is marked, and the paying process checks it before sending.
            report = validate_kept(target.ledger_url, raw, strict=strict)
        registered = register_rows(report, target.ledger_url, maker)
        counts = count_batch(target.ledger_url, report.batch_id)
    rejects: tuple[str | None, str | None] = (None, None)
    if report.rejects:
        rejects = write_rejects(report, out_dir or settings.reports_location())
    return IntakeResult(
        batch_id=report.batch_id,
        source_name=report.source_name,
        counts=counts,
        summary=summary_lines(report),
        rejects_csv=rejects[0],
        rejects_xlsx=rejects[1],
        sandbox=target.sandbox,
        already_registered=registered.already_registered,
    )
