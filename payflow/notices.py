"""The words of each notification payflow sends (`payflow.notify`), read from the ledger when
it is sent: the batch, its counts and amounts per currency, the command or console page to
open. Never a requisite, a name or a token."""

from __future__ import annotations

from payflow.ledger import Ledger
from payflow.ledger.counts import sums_by_currency
from payflow.notify import Event, Notice, batch_notice
from payflow.schemas.iso4217 import money_words
from payflow.wording import counted


def _to_send(ledger: Ledger, batch_id: str) -> str:
    counts = ledger.batch_counts(batch_id)
    sums = sums_by_currency(counts.to_pay)
    amounts = ", ".join(money_words(amount, currency) for currency, amount in sums.items())
    rows = sum(total.rows for total in counts.to_pay)
    return f"{counted(rows, 'payout')} to send ({amounts or 'nothing'}), of {counts.rows} rows"


def _maker(ledger: Ledger, batch_id: str) -> str | None:
    """The operator who made the batch: the one who submitted it, else the recorded maker."""
    from payflow.approvals.store import terms_of

    terms = terms_of(ledger, batch_id)
    if terms is not None and terms.maker:
        return terms.maker
    header = ledger.batch_header(batch_id)
    return header.made_by if header is not None else None


def _checkers(ledger: Ledger, batch_id: str) -> list[str]:
    """The own addresses of every checker who may approve the batch (all but its maker)."""
    from payflow.console.operators import addresses_of

    return addresses_of(ledger, "checker", besides=_maker(ledger, batch_id))


def _the_maker(ledger: Ledger, batch_id: str) -> list[str]:
    """The batch's maker's own address, when an admin set one."""
    from payflow.console.operators import operator_named

    name = _maker(ledger, batch_id)
    operator = operator_named(ledger, name) if name else None
    return [operator.notify_to] if operator is not None and operator.notify_to else []


def approval_needed(ledger: Ledger, batch_id: str, steps_left: int, seconds_left: int) -> Notice:
    """The batch waits for checkers' approval; how long it may wait."""
    return batch_notice(
        Event.APPROVAL_NEEDED,
        batch_id,
        [
            f"Batch {batch_id} waits for approval by {counted(steps_left, 'person')}.",
            _to_send(ledger, batch_id),
            f"The approval expires in {_duration(seconds_left)}.",
        ],
        f"payflow approve {batch_id} (or the console page /batches/{batch_id}/approve)",
        _checkers(ledger, batch_id),
    )


def approval_expiring(ledger: Ledger, batch_id: str, seconds_left: int) -> Notice:
    """Nobody approved yet and the approval expires soon."""
    return batch_notice(
        Event.APPROVAL_EXPIRING,
        batch_id,
        [
            f"Batch {batch_id} still waits for approval; it expires in {_duration(seconds_left)}.",
            _to_send(ledger, batch_id),
        ],
        f"payflow approve {batch_id} (or the console page /batches/{batch_id}/approve)",
        _checkers(ledger, batch_id),
    )


def approval_expired(ledger: Ledger, batch_id: str, why: str) -> Notice:
    """Nobody approved in time: nothing was paid; the maker registers the file again."""
    return batch_notice(
        Event.APPROVAL_EXPIRED,
        batch_id,
        [f"Batch {batch_id}: {why}; nothing was paid.", _to_send(ledger, batch_id)],
        f"payflow status {batch_id}",
        _the_maker(ledger, batch_id),
    )


def unpaid_rows(ledger: Ledger, batch_id: str) -> Notice:
    """The batch's run went to its end and some rows are not paid."""
    counts = ledger.batch_counts(batch_id)
    return batch_notice(
        Event.UNPAID_ROWS,
        batch_id,
        [f"Batch {batch_id} finished: {counts.unpaid_line()}."],
        f"payflow status {batch_id} (or the console page /batches/{batch_id})",
        _the_maker(ledger, batch_id),
    )


def findings_opened(batch_id: str, opened: int, open_now: int) -> Notice:
    """Reconciliation opened findings on the batch."""
    return batch_notice(
        Event.FINDING_OPENED,
        batch_id,
        [
            f"Reconciliation of batch {batch_id} opened {counted(opened, 'finding')}; "
            f"{counted(open_now, 'finding')} open now."
        ],
        f"payflow findings {batch_id}",
    )


def inbox_file_failed(file_name: str, why: str, where: str) -> Notice:
    """A file dropped in the inbox could not become a batch."""
    return Notice(
        Event.INBOX_FILE_FAILED,
        f"file {file_name}",
        (f"The inbox file {file_name} did not become a batch: {why}",),
        f"read {where}, fix the file and drop it in the inbox again",
    )


def _duration(seconds: int) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds // 60} min"
    return f"{seconds} s"
