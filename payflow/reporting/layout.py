"""The report's column layout, version LAYOUT_VERSION: one definition for CSV, XLSX and readme.

Change a column's meaning or order only with a new version; adding a column at the end is a
minor version. The readme sheet is generated from these definitions, so it cannot drift.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from payflow.inert import inert_text
from payflow.ledger import UNSENT_WORDS, Disposition, ReportLine, RowOutcome, UnsentReason
from payflow.reconcile import Classification, FailureClasses
from payflow.reconcile.advice import advise
from payflow.redact import mask_requisites
from payflow.schemas.iso4217 import quantized
from payflow.schemas.recipients import canonical_requisites

# 2.0: completed_at_utc, filled for failed rows too (none ever completed), is final_status_at_utc.
# 2.1: outcome from the service's latest word; service_learned_by (last); last_checked_at_utc:
# when the service last said so, by any channel.
LAYOUT_VERSION = "2.1"
NOT_FOUND = "NOT_FOUND"  # the service's 404, as `payflow.ledger.totals` names it


class Kind(StrEnum):
    """How a column's values are written."""

    TEXT = "text"  # input-derived text: `inert_text` in the CSV, a string cell in the XLSX
    NUMBER = "number"
    AMOUNT = "amount"  # a number with the row currency's decimals
    TIME = "time"  # UTC, written without a zone


Cell = str | int | Decimal | datetime | None


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a sheet: its header, its meaning, and how to read its value."""

    name: str
    meaning: str
    kind: Kind
    width: float
    value: Callable[[ReportLine, Classification | None], Cell]
    wrap: bool = False  # free text of any length: wrapped in the XLSX, its line made taller


def _masked_recipient(payment_type: str | None, requisites: str | None) -> str:
    """The recipient as the report names it: the canonical form (the one the repeat check and
    the derived id compare), masked; never what was sent, which the ledger keeps as written."""
    if not requisites:
        return ""
    return mask_requisites(canonical_requisites(payment_type or "", requisites))


def _amount(value: Decimal | None, currency: str | None) -> Decimal | None:
    return None if value is None else quantized(value, currency)


def _time(value: datetime | None) -> datetime | None:
    return None if value is None else value.replace(tzinfo=None)


NEVER_SENT = "never sent"
SERVICE_WORDS: dict[UnsentReason, str] = {
    UnsentReason.NOT_SENT_YET: "not sent yet",
    UnsentReason.REFUSED: "refused, no payout",
}
"""service_status of a row the batch made no payout for (NEVER_SENT unless named here)."""


def service_status(line: ReportLine) -> str | None:
    """What the service holds for the row: its status, or, for a row the batch never sent, why
    there is no payout (a 404 to the lookup of an unsent row is no lost payout)."""
    if line.unsent is None:
        return line.service_status
    # A payout under an unsent row's own externalId is the service's (unexpected_at_service);
    # under a refused row's, it is the other batch's payout, not this row's.
    own_id = line.disposition == Disposition.NEW or line.first_batch_id is None
    if own_id and line.service_status not in (None, NOT_FOUND):
        return line.service_status
    return SERVICE_WORDS.get(line.unsent, NEVER_SENT)


def _detail(line: ReportLine) -> str:
    parts: list[str] = []
    if line.unsent is not None:
        parts.append(UNSENT_WORDS[line.unsent])
    if line.reasons:
        parts.extend(str(reason) for reason in json.loads(line.reasons))
    if line.outcome is RowOutcome.DUPLICATE:
        parts.insert(0, f"already registered by batch {line.first_batch_id}: not paid again")
    return "; ".join(parts)


ROW_COLUMNS: tuple[Column, ...] = (
    Column(
        "source_row",
        "Row number in the uploaded file (header is row 1).",
        Kind.NUMBER,
        12,
        lambda r, c: r.row_number,
    ),
    Column(
        "external_id",
        "The payout's externalId (its idempotency key).",
        Kind.TEXT,
        24,
        lambda r, c: r.external_id,
        wrap=True,
    ),
    Column("payout_id", "The service's payout id.", Kind.TEXT, 38, lambda r, c: r.payout_id),
    Column(
        "payment_type",
        "SBP, SIM, BANK_ACCOUNT or EMAIL (a rejected row's: as the file had it).",
        Kind.TEXT,
        13,
        lambda r, c: r.payment_type,
    ),
    Column("currency", "ISO 4217 code of the payout.", Kind.TEXT, 9, lambda r, c: r.currency),
    Column(
        "amount_asked",
        "Amount in the file, with the currency's decimals (a rejected row's: when the amount "
        "itself broke no rule).",
        Kind.AMOUNT,
        15,
        lambda r, c: _amount(r.amount, r.currency),
    ),
    Column(
        "amount_reported",
        "Amount the service reported at the last check.",
        Kind.AMOUNT,
        17,
        lambda r, c: _amount(r.service_amount, r.currency),
    ),
    Column(
        "requisites_masked",
        "Recipient requisites in canonical form (an SBP phone as 79XXXXXXXXX), all but the last "
        "4 characters masked (a rejected row's too, as the file had it).",
        Kind.TEXT,
        18,
        lambda r, c: _masked_recipient(r.payment_type, r.requisites),
    ),
    Column(
        "recipient_name",
        "Recipient name as in the file.",
        Kind.TEXT,
        24,
        lambda r, c: r.name,
        wrap=True,
    ),
    Column(
        "bank_id",
        "SBP bank id sent as bankName (bank names are not kept in the ledger).",
        Kind.TEXT,
        16,
        lambda r, c: r.bank_name,
    ),
    Column("ledger_state", "State of the row in the ledger.", Kind.TEXT, 16, lambda r, c: r.state),
    Column(
        "service_status",
        "Status the service reported at the last check (NOT_FOUND: it answered 404 for a payout "
        "the batch sent); never sent, not sent yet, or refused, no payout: the batch made no "
        "payout for the row (detail says why).",
        Kind.TEXT,
        15,
        lambda r, c: service_status(r),
    ),
    Column(
        "outcome",
        "From the service's latest word once there is one: paid, paid (corrected from failed), "
        "failed, not paid (corrected after completion), canceled, expired, pending, pending at "
        "the service, not_sent, refused, rejected or duplicate.",
        Kind.TEXT,
        20,
        lambda r, c: r.outcome.value,
        wrap=True,
    ),
    Column(
        "status_message",
        "The service's statusMessage (or the refusal message).",
        Kind.TEXT,
        30,
        lambda r, c: r.status_message,
        wrap=True,
    ),
    Column(
        "failure_class",
        "retryable, fix_details, do_not_retry or unknown (failed rows only).",
        Kind.TEXT,
        13,
        lambda r, c: c.failure_class.value if c else None,
    ),
    Column(
        "next_step",
        "What to do about a failed row, from the failure classes table.",
        Kind.TEXT,
        36,
        lambda r, c: c.next_step if c else None,
        wrap=True,
    ),
    Column(
        "submitted_at_utc",
        "When the service first acknowledged the payout (UTC).",
        Kind.TIME,
        20,
        lambda r, c: _time(r.submitted_at),
    ),
    Column(
        "final_status_at_utc",
        "When the payout reached its final status, paid or not: COMPLETED, FAILED, CANCELED "
        "or EXPIRED (UTC); for a corrected payout, when it was corrected.",
        Kind.TIME,
        20,
        lambda r, c: _time(r.final_status_at),
    ),
    Column(
        "last_checked_at_utc",
        "When the service last said so (UTC): a webhook, a poll, a reconcile or a rerun check.",
        Kind.TIME,
        20,
        lambda r, c: _time(r.checked_at),
    ),
    Column(
        "earlier_external_ids",
        "When the row was rerun: its earlier attempts (the row shows its latest).",
        Kind.TEXT,
        22,
        lambda r, c: r.earlier,
        wrap=True,
    ),
    Column(
        "findings",
        "Open or acknowledged findings of the row (see the findings sheet).",
        Kind.TEXT,
        26,
        lambda r, c: r.findings,
        wrap=True,
    ),
    Column(
        "detail",
        "Why the row was never sent (with the rejection reasons), or not paid again.",
        Kind.TEXT,
        36,
        lambda r, c: _detail(r),
        wrap=True,
    ),
    Column(
        "service_learned_by",
        "How the ledger learned the service's latest word: webhook, poll, reconcile or rerun.",
        Kind.TEXT,
        12,
        lambda r, c: r.service_source,
    ),
)


def classification(line: ReportLine, classes: FailureClasses) -> Classification | None:
    """The failure class and next step of a row that did not pay, checked against the
    service's word and the row's history (`reconcile.advice`); None for the others."""
    return advise(line, classes)


def row_cells(line: ReportLine, classes: FailureClasses) -> list[Cell]:
    """The row's values in layout order; text as the input had it (each file guards it)."""
    found = classification(line, classes)
    cells: list[Cell] = []
    for column in ROW_COLUMNS:
        value = column.value(line, found)
        if column.kind is Kind.TEXT:
            value = "" if value is None else str(value)
        cells.append(value)
    return cells


def csv_text(cell: Cell) -> str:
    """A cell as CSV text: amounts exact, times ISO 8601 with Z, text made inert."""
    if cell is None:
        return ""
    if isinstance(cell, datetime):
        return cell.isoformat(timespec="seconds") + "Z"
    if isinstance(cell, Decimal):
        return format(cell, "f")
    if isinstance(cell, str):
        return inert_text(cell)
    return str(cell)
