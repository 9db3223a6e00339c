"""A batch's figures read from the ledger with SQL: rows per state, what is left to pay, and the
content hash an approval is bound to.

Every figure a run prints or an approval shows comes from here, read after the last state
change, never from the file or from counters kept while paying.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import Engine, func, select

from payflow.ledger.claims import in_batch
from payflow.ledger.reading import batch_summary
from payflow.ledger.states import (
    NOT_PAID_STATES,
    PENDING_STATES,
    SENT_STATES,
    TERMINAL_STATES,
    TO_SEND_STATES,
    RowState,
)
from payflow.ledger.tables import BatchRow, Payout

HASH_PAGE = 5_000


@dataclass(frozen=True, slots=True)
class CurrencyTotal:
    """Rows and amount of one currency and destination (still to pay, or of the whole batch)."""

    currency: str
    payment_type: str
    rows: int
    amount: Decimal


@dataclass(frozen=True, slots=True)
class BatchCounts:
    """Rows of a batch per state and what is left to pay, as the ledger holds them now."""

    batch_id: str
    by_state: Mapping[str, int]
    to_pay: tuple[CurrencyTotal, ...] = ()
    content_hash: str = ""
    # Payouts this batch registered itself that left VALIDATED (and HELD): sent, or being sent.
    # Rows whose payout another batch registered (same externalId) count in `by_state`, not here.
    own_sent: int = 0

    @property
    def statuses(self) -> dict[str, int]:
        """Rows per state, sorted by state name (the JSON summary's `statuses`)."""
        return dict(sorted(self.by_state.items()))

    def count(self, *groups: frozenset[RowState]) -> int:
        """Rows in any of the given state groups."""
        states = {state.value for group in groups for state in group}
        return sum(n for state, n in self.by_state.items() if state in states)

    @property
    def rows(self) -> int:
        """Every source row of the batch."""
        return sum(self.by_state.values())

    @property
    def new(self) -> int:
        """Rows never sent (VALIDATED): the only ones a confirmation asks about."""
        return self.by_state.get(RowState.VALIDATED.value, 0)

    @property
    def held(self) -> int:
        """Rows held back as repeats of a recent payout until an operator acknowledges them."""
        return self.by_state.get(RowState.HELD.value, 0)

    @property
    def pending(self) -> int:
        """Rows sent or being sent whose payout is not final yet."""
        return self.count(PENDING_STATES)

    @property
    def at_service(self) -> int:
        """Rows the service holds or may hold a payout for: sent, or being sent (SUBMITTING).
        Reconciling a batch with none asks the service about nothing it could have."""
        return self.count(SENT_STATES, PENDING_STATES)

    @property
    def final(self) -> int:
        """Rows that need nothing more from the pipeline."""
        return self.count(TERMINAL_STATES)

    @property
    def completed(self) -> int:
        """Rows whose payout is COMPLETED."""
        return self.by_state.get(RowState.COMPLETED.value, 0)

    @property
    def rejected(self) -> int:
        """Rows rejected by validation or registered as a CONFLICT."""
        return self.count(frozenset({RowState.REJECTED, RowState.CONFLICT}))

    @property
    def not_paid(self) -> int:
        """Rows that ended without money reaching the recipient."""
        return self.count(NOT_PAID_STATES)

    @property
    def to_send(self) -> int:
        """Rows with no known payout yet (VALIDATED or SUBMITTING)."""
        return self.count(TO_SEND_STATES)

    @property
    def all_completed(self) -> bool:
        """True only when every row of the batch is COMPLETED."""
        return self.rows > 0 and self.completed == self.rows

    def unpaid_line(self) -> str:
        """`2 of 10 rows not paid (FAILED 1, PROCESSING 1)`: what keeps the batch from paid."""
        paid = RowState.COMPLETED.value
        unpaid = {state: n for state, n in self.statuses.items() if state != paid}
        states = ", ".join(f"{state} {n}" for state, n in unpaid.items())
        return f"{sum(unpaid.values())} of {self.rows} rows not paid ({states})"

    def amounts_to_pay(self) -> dict[str, Decimal]:
        """Sum still to pay per currency (for the balance check)."""
        return sums_by_currency(self.to_pay)


def sums_by_currency(totals: Iterable[CurrencyTotal]) -> dict[str, Decimal]:
    """The amounts of `totals` added up per currency, whatever the destination."""
    sums: dict[str, Decimal] = {}
    for total in totals:
        sums[total.currency] = sums.get(total.currency, Decimal(0)) + total.amount
    return sums


def rows_by_currency(totals: Iterable[CurrencyTotal]) -> dict[str, int]:
    """The rows of `totals` counted per currency, whatever the destination."""
    rows: dict[str, int] = {}
    for total in totals:
        rows[total.currency] = rows.get(total.currency, 0) + total.rows
    return rows


def to_pay(engine: Engine, batch_id: str) -> tuple[CurrencyTotal, ...]:
    """Rows and sums per currency and destination of the batch's payouts not yet sent."""
    return currency_totals(engine, batch_id, TO_SEND_STATES)


def currency_totals(
    engine: Engine, batch_id: str, states: frozenset[RowState] | None = None
) -> tuple[CurrencyTotal, ...]:
    """Rows and sums per currency and destination of the batch's payouts in `states` (every
    payout it is responsible for when None: its figures whatever it went through)."""
    group = (Payout.currency, Payout.payment_type, Payout.amount)
    query = select(*group, func.count()).where(in_batch(batch_id)).group_by(*group)
    if states is not None:
        query = query.where(Payout.state.in_([s.value for s in states]))
    # Amounts are exact text in the ledger: SQL sums them as floats, so Decimal adds them here,
    # each distinct amount once with its count (amounts repeat: a payroll pays many the same).
    sums: dict[tuple[str, str], tuple[int, Decimal]] = {}
    with engine.connect() as connection:
        for currency, payment_type, amount, count in connection.execute(query):
            rows, total = sums.get((currency, payment_type), (0, Decimal(0)))
            sums[(currency, payment_type)] = (rows + count, total + amount * count)
    return tuple(
        CurrencyTotal(currency, payment_type, rows, amount)
        for (currency, payment_type), (rows, amount) in sorted(sums.items())
    )


def content_hash(engine: Engine, batch_id: str) -> str:
    """SHA-256 over every source row of the batch: row, externalId, disposition, payout content.

    Fixed when the batch is registered; an approval records it so that a different batch (or a
    ledger edited behind the pipeline's back) can never be paid under that approval.
    """
    query = (
        select(
            BatchRow.row_number,
            func.coalesce(BatchRow.external_id, ""),
            BatchRow.disposition,
            func.coalesce(Payout.content_hash, ""),
        )
        .select_from(BatchRow)
        .outerjoin(Payout, Payout.external_id == BatchRow.external_id)
        .where(BatchRow.batch_id == batch_id)
        .order_by(BatchRow.row_number)
        .execution_options(yield_per=HASH_PAGE)
    )
    digest = hashlib.sha256(batch_id.encode())
    with engine.connect() as connection:
        for row, external_id, disposition, payout_hash in connection.execute(query):
            digest.update(f"\n{row}\t{external_id}\t{disposition}\t{payout_hash}".encode())
    return digest.hexdigest()


def batch_counts(engine: Engine, batch_id: str) -> BatchCounts:
    """Every figure of the batch, read now."""
    return BatchCounts(
        batch_id,
        batch_summary(engine, batch_id),
        to_pay(engine, batch_id),
        content_hash(engine, batch_id),
        own_sent(engine, batch_id),
    )


def own_sent(engine: Engine, batch_id: str) -> int:
    """Payouts the batch registered itself that were sent or are being sent."""
    unsent = (RowState.VALIDATED.value, RowState.HELD.value)
    query = (
        select(func.count())
        .select_from(Payout)
        .where(Payout.batch_id == batch_id, Payout.state.not_in(unsent))
    )
    with engine.connect() as connection:
        return int(connection.execute(query).scalar_one())
