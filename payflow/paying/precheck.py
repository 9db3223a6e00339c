"""The paying process's check of rows registered without their bank or service checked.

A maker's process without PAYFLOW_API_TOKEN could not ask the service for an SBP phone's banks
(or, in a ledger no paying process had used, for the services list); it registered those rows
with a mark, and the ledger never hands a marked row out for sending. Before the first payout,
the paying process asks for the lists, judges each marked row by the intake's own rules, and
either unmarks it (with the bank id its bank name stands for) or refuses it unsent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from payflow.ledger import Ledger
from payflow.ledger.kept_lists import BANK, SERVICE, passed, refuse, unchecked_rows
from payflow.model import PayoutInstruction

if TYPE_CHECKING:  # a pay run with no marked row never loads the intake (pandas, pandera)
    from payflow.intake.lookups import ListsClient, ServiceInfo

SBP = "SBP"


@dataclass(frozen=True, slots=True)
class Prechecked:
    """How many marked rows passed the check and how many were refused unsent."""

    passed: int = 0
    refused: int = 0


async def check_marked_rows(client: ListsClient, ledger: Ledger, batch_id: str) -> Prechecked:
    """Check the batch's marked rows with the service's lists (kept for makers as fetched)."""
    marks = unchecked_rows(ledger, batch_id)
    if not marks:
        return Prechecked()
    from payflow.intake.kept import keep_fetched
    from payflow.intake.lookups import fetch_banks, fetch_services
    from payflow.schemas.lookups import bank_verdict

    rows = {ext: ledger.payout_instruction(ext) for ext in marks}
    needs_services = any(SERVICE in checks.split(",") for checks in marks.values())
    phones = [
        row.requisites
        for ext, row in rows.items()
        if row is not None and row.payment_type == SBP and BANK in marks[ext].split(",")
    ]
    services = await fetch_services(client) if needs_services else None
    banks = await fetch_banks(client, phones)
    keep_fetched(ledger, services, banks)
    done = Prechecked()
    for ext, checks in marks.items():
        row = rows[ext]
        if row is None:
            continue
        problem = _service_problem(row, services) if SERVICE in checks.split(",") else None
        bank_id = None
        if problem is None and BANK in checks.split(",") and row.payment_type == SBP:
            bank_id, rule, message = bank_verdict(
                row.bank_name or "", banks.get(row.requisites, [])
            )
            if bank_id is None:
                column = "requisites" if rule == "sbp_no_bank_for_phone" else "bankName"
                problem = f"{column}: {message} ({rule})"
        if problem is not None:
            refuse(ledger, ext, problem)
            done = Prechecked(done.passed, done.refused + 1)
        else:
            passed(ledger, ext, bank_id if bank_id not in (None, row.bank_name) else None)
            done = Prechecked(done.passed + 1, done.refused)
    return done


def _service_problem(row: PayoutInstruction, services: list[ServiceInfo] | None) -> str | None:
    """What the row's serviceId (or, without one, its type and currency) breaks, as intake's
    `check_services` and `check_enabled_pairs` would say it."""
    from payflow.schemas.lookups import service_verdict

    if services is None:
        return None
    if row.service_id is not None:
        by_id = {service.id: service for service in services}
        verdict = service_verdict(by_id, str(row.service_id), row.payment_type, row.currency)
        return None if verdict is None else f"serviceId: {verdict[1]} ({verdict[0]})"
    enabled = {(s.payment_type, s.currency) for s in services if s.payment_type and s.currency}
    if not enabled or (row.payment_type, row.currency) in enabled:
        return None  # a services list silent on pairs checks nothing (as intake)
    return (
        f"currency: no payout service enabled for this account pays {row.payment_type} in "
        f"{row.currency} (service_not_enabled)"
    )
