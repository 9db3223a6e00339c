"""A batch's amounts per currency paid, failed and still pending, as its page shows them.

The figures are the report's (`reporting.summary.currency_summaries` over
`Ledger.outcome_totals`): each row by its latest attempt and the service's word about it, so a
row a rerun paid, or the platform paid after a failure, reads paid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from payflow.ledger import OutcomeTotal
from payflow.ledger.totals import FAILED_AFTER_SENDING, PENDING_OUTCOMES
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
            paid=(c.paid, c.paid_amount),
            failed=(c.count(*FAILED_AFTER_SENDING), c.amount(*FAILED_AFTER_SENDING)),
            pending=(c.pending, c.amount(*PENDING_OUTCOMES)),
        )
        for c in currency_summaries(totals).values()
        if c.sent
    ]
