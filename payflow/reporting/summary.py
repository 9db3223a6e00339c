"""The batch summary: per-currency counts and amounts, rates, roll-forward, failures, findings.

Every figure comes from a GROUP BY in the ledger (`payflow.ledger.totals`); nothing here walks
the rows. The same object feeds the XLSX summary sheet and the Prefect artifacts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal

from payflow.ledger import (
    FindingKind,
    FindingState,
    FindingView,
    Ledger,
    MessageTotal,
    OutcomeTotal,
    RowOutcome,
    UnsentTotal,
)
from payflow.ledger.totals import (
    BLOCKED_BEFORE_SENDING,
    FAILED_AFTER_SENDING,
    PAID_OUTCOMES,
    PENDING_OUTCOMES,
    SENT_OUTCOMES,
    Settlement,
)
from payflow.reconcile import Classification, FailureClasses, RollForward, roll_forward
from payflow.wording import not_rechecked_line

NO_CURRENCY = "(none)"


@dataclass(slots=True)
class CurrencySummary:
    """One currency's rows and amounts by outcome, and the three rates."""

    currency: str
    rows: Counter[RowOutcome] = field(default_factory=Counter)
    amounts: dict[RowOutcome, Decimal] = field(default_factory=dict)
    stuck: int = 0
    # The payouts the service paid (its latest word; a row paid twice counts twice).
    service_payouts: int = 0
    service_amount: Decimal = Decimal(0)

    @property
    def paid(self) -> int:
        """Rows the service paid (corrected from failed included)."""
        return self.count(*PAID_OUTCOMES)

    @property
    def paid_amount(self) -> Decimal:
        """Amount of the rows the service paid, at the service's amounts."""
        return self.amount(*PAID_OUTCOMES)

    @property
    def pending(self) -> int:
        """Rows not final at the service (pending here, or pending at the service again)."""
        return self.count(*PENDING_OUTCOMES)

    def count(self, *outcomes: RowOutcome) -> int:
        """Rows with any of these outcomes."""
        return sum(self.rows[o] for o in outcomes)

    def amount(self, *outcomes: RowOutcome) -> Decimal:
        """Amount of the rows with any of these outcomes."""
        return sum((self.amounts.get(o, Decimal(0)) for o in outcomes), Decimal(0))

    @property
    def in_file(self) -> int:
        """Every source row of this currency."""
        return sum(self.rows.values())

    @property
    def sent(self) -> int:
        """Rows with a payout at the service."""
        return self.count(*SENT_OUTCOMES)

    @property
    def blocked_rate(self) -> Decimal:
        """Share of the file's rows blocked before sending (rejected or refused)."""
        return _rate(self.count(*BLOCKED_BEFORE_SENDING), self.in_file)

    @property
    def failed_rate(self) -> Decimal:
        """Share of the sent rows that failed, were canceled, expired or were corrected."""
        return _rate(self.count(*FAILED_AFTER_SENDING), self.sent)

    @property
    def stalled_rate(self) -> Decimal:
        """Share of the sent rows still pending."""
        return _rate(self.pending, self.sent)


def _rate(part: int, whole: int) -> Decimal:
    return (Decimal(part) / Decimal(whole)).quantize(Decimal("0.0001")) if whole else Decimal(0)


@dataclass(frozen=True, slots=True)
class FailureGroup:
    """Failed rows sharing a status and statusMessage, with what to do about them."""

    total: MessageTotal
    classification: Classification


@dataclass(frozen=True, slots=True)
class Summary:
    """Everything the summary sheet and the artifacts show."""

    batch_id: str
    sandbox: bool
    currencies: list[CurrencySummary]
    balance: list[RollForward]
    failures: list[FailureGroup]
    findings: list[FindingView]
    unsent: list[UnsentTotal] = field(default_factory=list)  # rows never sent, by reason
    # Rows not final, rows the service disagrees with.
    settlement: Settlement = field(default_factory=lambda: Settlement(0, 0))
    not_rechecked: int = 0  # sent payouts no reconciliation re-fetched since their last news

    @property
    def settled(self) -> bool:
        """Every row final and as the service says, and no finding open: `payflow reconcile`
        exits 0 only then."""
        return not (
            self.open_findings() or self.settlement.not_final or self.settlement.disagreeing
        )

    def not_rechecked_line(self) -> str | None:
        """Whether the figures were re-checked against the service, and when they will be."""
        if not self.not_rechecked:
            return None
        return not_rechecked_line(self.not_rechecked, self.batch_id, embedded=self.sandbox)

    def open_findings(self) -> list[FindingView]:
        """Findings nobody has acknowledged and a later reconcile has not resolved: what a
        person still has to look at (`payflow reconcile` exits 1 for them, as `findings` does)."""
        return [f for f in self.findings if f.state == FindingState.OPEN]

    def unresolved_findings(self) -> list[FindingView]:
        """Open and acknowledged findings: what the report and its artifacts list."""
        return [f for f in self.findings if f.state != FindingState.RESOLVED]


def currency_summaries(totals: Iterable[OutcomeTotal]) -> dict[str, CurrencySummary]:
    """Each currency's rows and amounts by outcome (each row by its latest attempt), from
    `Ledger.outcome_totals`: the report's figures, and the console's amounts paid, failed and
    pending."""
    by_currency: dict[str, CurrencySummary] = {}
    for total in totals:
        name = total.currency or NO_CURRENCY
        summary = by_currency.setdefault(name, CurrencySummary(name))
        summary.rows[total.outcome] += total.rows
        summary.amounts[total.outcome] = summary.amount(total.outcome) + total.amount
    return by_currency


def build_summary(
    ledger: Ledger, batch_id: str, classes: FailureClasses, *, sandbox: bool
) -> Summary:
    """Read the batch's figures from the ledger."""
    by_currency = currency_summaries(ledger.outcome_totals(batch_id))
    for paid in ledger.service_paid_totals(batch_id):
        name = paid.currency or NO_CURRENCY
        summary = by_currency.setdefault(name, CurrencySummary(name))
        summary.service_payouts, summary.service_amount = paid.payouts, paid.amount
    findings = ledger.findings(batch_id)
    for (currency, kind), count in ledger.open_finding_counts(batch_id).items():
        if kind == FindingKind.STUCK:
            name = currency or NO_CURRENCY
            by_currency.setdefault(name, CurrencySummary(name)).stuck += count
    failures = [
        FailureGroup(total, classes.classify(total.state, total.status_message))
        for total in ledger.failure_totals(batch_id)
    ]
    return Summary(
        batch_id,
        sandbox,
        [by_currency[c] for c in sorted(by_currency)],
        roll_forward(ledger, batch_id),
        failures,
        findings,
        [replace(t, currency=t.currency or NO_CURRENCY) for t in ledger.unsent_totals(batch_id)],
        ledger.settlement(batch_id),
        ledger.not_rechecked(batch_id),
    )
