"""A batch's amounts per currency paid, failed and still pending, as its page shows them.

The figures are the report's (`reporting.summary.currency_summaries` over
`Ledger.outcome_totals`): each row by its latest attempt, so a row a rerun paid reads paid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from payflow.ledger import OutcomeTotal, RowOutcome
from payflow.ledger.totals import FAILED_AFTER_SENDING
from payflow.reporting.summary import currency_summaries


@dataclass(frozen=True)
class AmountLine:
    """One currency's rows and amounts paid, failed and still pending, by latest attempt."""

    currency: str
    paid: tuple[int, Decimal]
    # Sent and not paid: FAILED, CANCELED, EXPIRED, or corrected from COMPLETED to FAILED.
    failed: tuple[int, Decimal]
    pending: tuple[int, Decimal]  # sent (or being sent), not final yet


def amount_lines(totals: Iterable[OutcomeTotal]) -> list[AmountLine]:
    """The batch's amounts per currency as the report's summary counts them
    (`reporting.summary.currency_summaries`); only currencies with a row sent."""
    return [
        AmountLine(
            c.currency,
            paid=(c.count(RowOutcome.PAID), c.amount(RowOutcome.PAID)),
            failed=(c.count(*FAILED_AFTER_SENDING), c.amount(*FAILED_AFTER_SENDING)),
            pending=(c.count(RowOutcome.PENDING), c.amount(RowOutcome.PENDING)),
        )
        for c in currency_summaries(totals).values()
        if c.sent
    ]
