"""What `payflow run` asks the ledger around the flow: can it open, repeats, what is held.

Kept apart from run.py so the pipeline that drives the flow can change without touching it.
"""

from __future__ import annotations

from payflow.acts.actor import Actor
from payflow.api.errors import PaymentsApiError
from payflow.ledger import NOT_SENT_PREFIX, BatchCounts, RowState
from payflow.redact import printable
from payflow.runtime import open_ledger
from payflow.settings import Settings
from payflow.wording import RUN_AGAIN_TO_RESUME, api_trouble, counted

SHOWN_HELD = 20
SHOWN_NOT_PAID_GROUPS = 5
SHOWN_REFUND_ROWS = 10
# A refund that ended so is refunded again only under an externalId the operator writes.
RETRIED_ON_PURPOSE = frozenset({RowState.FAILED, RowState.CANCELED})


def check_ledger(settings: Settings) -> None:
    """Open (and migrate) the ledger before anything else.

    Raises ConfigurationError naming PAYFLOW_LEDGER_URL when the ledger cannot be opened."""
    with open_ledger(settings):
        pass


def allow_repeats(settings: Settings, batch_id: str, by: Actor) -> BatchCounts:
    """Record `--allow-repeat` for the batch as `by`'s act (its HELD rows go on, for a second
    person to approve) and count it again."""
    from payflow.acts.repeats import allow_repeats as allow

    with open_ledger(settings) as ledger:
        allow(ledger, batch_id, by)
        return ledger.batch_counts(batch_id)


def held_lines(
    settings: Settings, batch_id: str, again: str = "run again with --allow-repeat"
) -> list[str]:
    """Lines listing the batch's rows HELD as repeats (none: no lines), read from the ledger,
    and `again`: how to pay them anyway."""
    with open_ledger(settings) as ledger:
        held = ledger.held_rows(batch_id)
    if not held:
        return []
    repeats = counted(len(held), "row")
    lines = [f"  {repeats} held: the same person was paid the same amount and currency recently"]
    for row in held[:SHOWN_HELD]:
        earlier = f"{row.earlier_external_id} ({row.earlier_state}, batch {row.earlier_batch_id})"
        differs = f"; {row.differs}" if row.differs else ""
        lines.append(f"    row {row.row_number} {row.external_id}: repeats {earlier}{differs}")
    if len(held) > SHOWN_HELD:
        lines.append(f"    ... and {len(held) - SHOWN_HELD} more in the report")
    lines.append(f"  to pay them anyway, {again}; then another person approves")
    return lines


def not_sent_lines(settings: Settings, batch_id: str) -> tuple[list[str], set[str]]:
    """Rows the service refused at every try, so nothing was made for them (still VALIDATED,
    "not sent: ..."), grouped by what it answered; and their externalIds. A balance that ran
    out mid-batch read "still pending at the deadline", its reason nowhere."""
    by_reason: dict[str, list[str]] = {}
    with open_ledger(settings) as ledger:
        for row in ledger.batch_rows(batch_id):
            message = row.status_message or ""
            if row.state is RowState.VALIDATED and message.startswith(NOT_SENT_PREFIX):
                by_reason.setdefault(message, []).append(row.external_id or f"row {row.row_number}")
    lines = []
    for message, ids in sorted(by_reason.items(), key=lambda item: -len(item[1])):
        shown = ", ".join(ids[:SHOWN_HELD]) + (" ..." if len(ids) > SHOWN_HELD else "")
        # The service's words: shown with any control character escaped, never acted on.
        lines.append(printable(f"  {counted(len(ids), 'row')} {message} ({shown})"))
    if lines:
        lines.append(
            "  nothing exists at the service for them: fix the cause (a balance to top up), then "
            f"run the same file again or `payflow pay {batch_id}`; they are sent once"
        )
    return lines, {i for ids in by_reason.values() for i in ids}


def conflict_lines(settings: Settings, batch_id: str) -> list[str]:
    """Each row refused as a known externalId with other content: its row, externalId and the
    columns that differ (it read "1 row with a known externalId and other content")."""
    with open_ledger(settings) as ledger:
        total, shown = ledger.conflict_rows(batch_id, SHOWN_HELD)
    lines = [
        printable(f"    row {line.row_number} {line.external_id}: {'; '.join(line.reasons)}")
        for line in shown
    ]
    if total > len(shown):
        lines.append(f"    ... and {total - len(shown)} more in the report")
    return lines


def not_paid_lines(settings: Settings, batch_id: str) -> list[str]:
    """The batch's unpaid rows grouped by statusMessage and failure class, read from the ledger,
    and how to review them before any is sent again (none: no lines)."""
    from payflow.rerun import classifier, find_candidates, group_candidates, group_lines

    with open_ledger(settings) as ledger:
        candidates = find_candidates(ledger, batch_id, classifier(settings.failure_classes_path))
    groups = group_candidates(candidates.eligible)
    if not groups:
        return []
    lines = [f"  not paid: {counted(len(candidates.eligible), 'row')}, by statusMessage:"]
    for group in groups[:SHOWN_NOT_PAID_GROUPS]:
        lines += [f"  {line}" for line in group_lines(group)]
    if len(groups) > SHOWN_NOT_PAID_GROUPS:
        lines.append(f"    ... and {len(groups) - SHOWN_NOT_PAID_GROUPS} more groups")
    lines += [
        "  failed rows are never sent again automatically: review them with",
        f"  `payflow rerun {batch_id}` (it sends nothing) or in the report",
    ]
    return lines


def not_refunded_lines(settings: Settings, batch_id: str) -> list[str]:
    """A line per row of a refund batch that was not refunded, read from the ledger: refused
    before sending (the checks, or an externalId used for other content) with its reasons,
    refused by the service with its message, or failed (the service never says why); then how
    to refund a failed one again, when there is one."""
    from payflow.refunds.report import not_refunded, why_not_refunded  # openpyxl's imports

    with open_ledger(settings) as ledger:
        views = not_refunded(ledger.refunds.rows(batch_id))
    lines = []
    for view in views[:SHOWN_REFUND_ROWS]:
        why = why_not_refunded(view)
        if not view.reasons:
            why = f"{view.external_id}: {why}"
        lines.append(printable(f"  {view.state.value.lower()} row {view.row_number}: {why}"))
    if len(views) > SHOWN_REFUND_ROWS:
        lines.append(f"  ... and {len(views) - SHOWN_REFUND_ROWS} more in the report")
    if any(view.state in RETRIED_ON_PURPOSE for view in views):
        # Nothing said how: the same file run again refunds nothing, by design.
        lines.append(
            "  a failed or canceled refund is never sent again by itself: to refund its order "
            "again, give the row a new externalId in the file and run `payflow refund FILE`"
        )
    return lines


def api_failure(settings: Settings, batch_id: str | None, exc: PaymentsApiError) -> str:
    """One line for an API failure (a refused token too) that stopped a run, saying truly what
    the ledger holds."""
    with open_ledger(settings) as ledger:
        registered = batch_id is not None and ledger.batch_exists(batch_id)
    then = RUN_AGAIN_TO_RESUME if registered else "nothing was registered or paid"
    return api_trouble(exc, then=then, sandbox=settings.uses_sandbox)
