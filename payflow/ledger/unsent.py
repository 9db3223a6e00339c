"""Why a source row has no payout of its own at the service: one SQL CASE, read by the report's
rows and by its summary, so a row the batch never sent never reads as a payout the service lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import ColumnElement, Engine, and_, case, func

from payflow.ledger.attempts import Latest, joined_rows, line_currency
from payflow.ledger.records import Disposition
from payflow.ledger.states import NOT_SENT_PREFIX, RowState
from payflow.ledger.tables import BatchRow

S = RowState


class UnsentReason(StrEnum):
    """Why a row was never made a payout at the service."""

    REJECTED = "rejected"  # broke a rule in the file
    CONFLICT = "conflict"  # its externalId is a payout with other content
    REFUSED = "refused"  # the service refused the POST (4xx): nothing was made
    HELD = "held"  # a repeat of a recent payout, waiting for --allow-repeat
    REFUSED_EACH_TRY = "refused_each_try"  # every POST refused, lookups found nothing (a balance)
    NOT_SENT_YET = "not_sent_yet"  # its pay run stopped before it, or the batch awaits approval


UNSENT_WORDS: dict[UnsentReason, str] = {
    UnsentReason.REJECTED: "never sent: rejected in the file",
    UnsentReason.CONFLICT: "never sent: its externalId is already a payout with other content",
    UnsentReason.REFUSED: "never made: the service refused it (its answer in status_message)",
    UnsentReason.HELD: "never sent: held as a repeat of a recent payout (released only with "
    "--allow-repeat and another person's approval)",
    UnsentReason.REFUSED_EACH_TRY: "never sent: the service refused every try and holds "
    "nothing (its answer in status_message); fix the cause, then `payflow pay` of this batch "
    "sends it once",
    UnsentReason.NOT_SENT_YET: "not sent yet: no pay run reached it (one stopped first, on a "
    "balance too low or a signal, or the batch waits for approval); `payflow pay` of this batch "
    "sends it once",
}
"""What the report says of each reason, in the operator's words."""


def unsent_expr() -> ColumnElement[str | None]:
    """The row's UnsentReason (NULL for a row with a payout) over batch_rows joined to their
    latest attempts (`attempts.join_latest_attempt`)."""
    return case(
        (BatchRow.disposition == Disposition.REJECTED.value, UnsentReason.REJECTED.value),
        (BatchRow.disposition == Disposition.CONFLICT.value, UnsentReason.CONFLICT.value),
        # Another batch's payout, counted there; this row is a duplicate, not unsent.
        (BatchRow.disposition == Disposition.ALREADY_KNOWN.value, None),
        (Latest.state == S.CONFLICT.value, UnsentReason.CONFLICT.value),
        (Latest.state == S.SUBMIT_REJECTED.value, UnsentReason.REFUSED.value),
        (Latest.state == S.HELD.value, UnsentReason.HELD.value),
        (
            and_(
                Latest.state == S.VALIDATED.value,
                Latest.status_message.startswith(NOT_SENT_PREFIX, autoescape=True),
            ),
            UnsentReason.REFUSED_EACH_TRY.value,
        ),
        (Latest.state == S.VALIDATED.value, UnsentReason.NOT_SENT_YET.value),
        else_=None,
    )


@dataclass(frozen=True, slots=True)
class UnsentTotal:
    """Rows of one currency ("" when the row has none) never sent for one reason."""

    currency: str
    reason: UnsentReason
    rows: int


def unsent_totals(engine: Engine, batch_id: str) -> list[UnsentTotal]:
    """Rows never sent per (currency, reason), by one GROUP BY; the currency is the row's report
    line's (`attempts.line_currency`)."""
    currency = line_currency()
    reason = unsent_expr()
    query = (
        joined_rows(batch_id)
        .add_columns(currency, reason, func.count())
        .where(reason.is_not(None))
        .group_by(currency, reason)
        .order_by(currency, reason)
    )
    with engine.connect() as connection:
        return [
            UnsentTotal(str(cur), UnsentReason(why), int(n))
            for cur, why, n in connection.execute(query)
        ]
