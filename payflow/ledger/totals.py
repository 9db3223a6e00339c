"""Reconciliation figures computed by the database: outcomes, totals and the report's rows.

Totals are GROUP BY queries, never a Python loop over rows, so a batch of a million rows costs
one scan. Amounts are stored as exact text; SQLite has no exact decimal type, so there a sum
adds integer units of 10^-4 (exact for amounts with up to four decimals below 9 * 10^11),
and PostgreSQL sums NUMERIC.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Engine,
    Float,
    Integer,
    Numeric,
    and_,
    case,
    cast,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.orm import aliased

from payflow.ledger.attempts import (
    Latest,
    LatestWord,
    earlier_paid_expr,
    heard_since,
    join_latest_attempt,
    joined_rows,
    line_currency,
    service_amount_expr,
    service_status_expr,
)
from payflow.ledger.reading import by_row_number
from payflow.ledger.records import OWN_PAYOUT, Disposition
from payflow.ledger.service_word import WordSource
from payflow.ledger.states import RowState
from payflow.ledger.tables import BatchRow, Finding, Payout, ServiceCheck, StatusEvent
from payflow.ledger.unsent import UnsentReason, unsent_expr

SCALE = 10_000
STREAM_ROWS = 2_000
S = RowState


class RowOutcome(StrEnum):
    """What became of one source row, as every reader shows it: from the service's latest word
    about the row's latest attempt once the ledger has one (`service_word`), else the ledger's."""

    PAID = "paid"
    # The service paid a payout the ledger holds as failed (or an earlier attempt of the row).
    PAID_CORRECTED = "paid (corrected from failed)"
    FAILED = "failed"
    # Paid, then corrected by the platform to FAILED, CANCELED or EXPIRED.
    CORRECTED = "not paid (corrected after completion)"
    CANCELED = "canceled"
    EXPIRED = "expired"
    PENDING = "pending"
    # Final in the ledger, CREATED or PROCESSING at the service: neither paid nor failed yet.
    PENDING_AT_SERVICE = "pending at the service"
    NOT_SENT = "not_sent"
    REFUSED = "refused"  # SUBMIT_REJECTED or CONFLICT: blocked before a payout existed
    REJECTED = "rejected"  # broke a rule in the file
    DUPLICATE = "duplicate"  # the externalId was registered before: not paid again


PAID_OUTCOMES = frozenset({RowOutcome.PAID, RowOutcome.PAID_CORRECTED})
"""Rows the service paid: never offered for a rerun, never counted as not paid."""
PENDING_OUTCOMES = frozenset({RowOutcome.PENDING, RowOutcome.PENDING_AT_SERVICE})
SENT_OUTCOMES = frozenset(
    {
        RowOutcome.FAILED,
        RowOutcome.CORRECTED,
        RowOutcome.CANCELED,
        RowOutcome.EXPIRED,
    }
    | PAID_OUTCOMES
    | PENDING_OUTCOMES
)
FAILED_AFTER_SENDING = frozenset(
    {RowOutcome.FAILED, RowOutcome.CORRECTED, RowOutcome.CANCELED, RowOutcome.EXPIRED}
)
BLOCKED_BEFORE_SENDING = frozenset({RowOutcome.REJECTED, RowOutcome.REFUSED})


def outcome_expr() -> ColumnElement[str]:
    """The row's RowOutcome as a SQL CASE over batch_rows joined to their latest attempts and
    the service's latest word about each (`LatestWord`): the one definition of a row's outcome.

    The service's word wins once the ledger has one: the ledger cannot follow a platform's move
    out of a final status (FAILED -> COMPLETED, COMPLETED -> CANCELED or PROCESSING)."""
    word = service_status_expr()
    failed_finals = [S.FAILED.value, S.CANCELED.value, S.EXPIRED.value]
    in_flight = [S.CREATED.value, S.PROCESSING.value]
    return case(
        (BatchRow.disposition == Disposition.REJECTED.value, RowOutcome.REJECTED.value),
        (BatchRow.disposition == Disposition.CONFLICT.value, RowOutcome.REFUSED.value),
        (BatchRow.disposition == Disposition.ALREADY_KNOWN.value, RowOutcome.DUPLICATE.value),
        (
            and_(word == S.COMPLETED.value, Latest.state.in_(failed_finals)),
            RowOutcome.PAID_CORRECTED.value,
        ),
        (word == S.COMPLETED.value, RowOutcome.PAID.value),
        (
            and_(word.in_(failed_finals), Latest.state == S.COMPLETED.value),
            RowOutcome.CORRECTED.value,
        ),
        (
            and_(word.in_(in_flight), Latest.state.in_([S.COMPLETED.value, *failed_finals])),
            RowOutcome.PENDING_AT_SERVICE.value,
        ),
        # A failed attempt whose earlier attempt the service paid after all: the row is paid.
        (
            and_(Latest.attempt > 0, Latest.state != S.COMPLETED.value, earlier_paid_expr()),
            RowOutcome.PAID_CORRECTED.value,
        ),
        (and_(Latest.state == S.FAILED.value, Latest.corrected), RowOutcome.CORRECTED.value),
        (word == S.FAILED.value, RowOutcome.FAILED.value),
        (word == S.CANCELED.value, RowOutcome.CANCELED.value),
        (word == S.EXPIRED.value, RowOutcome.EXPIRED.value),
        (Latest.state == S.COMPLETED.value, RowOutcome.PAID.value),
        (and_(Latest.state == S.FAILED.value, Latest.corrected), RowOutcome.CORRECTED.value),
        (Latest.state == S.FAILED.value, RowOutcome.FAILED.value),
        (Latest.state == S.CANCELED.value, RowOutcome.CANCELED.value),
        (Latest.state == S.EXPIRED.value, RowOutcome.EXPIRED.value),
        # HELD: a repeat of a recent payout, waiting for `--allow-repeat`; never sent yet.
        (Latest.state.in_([S.VALIDATED.value, S.HELD.value]), RowOutcome.NOT_SENT.value),
        (
            Latest.state.in_([S.SUBMIT_REJECTED.value, S.CONFLICT.value]),
            RowOutcome.REFUSED.value,
        ),
        else_=RowOutcome.PENDING.value,
    )


def exact_sum(column: Any, dialect: str) -> ColumnElement[Any]:
    """SUM of a DecimalText column without floats; read it back with `sum_value`."""
    if dialect == "postgresql":
        return func.coalesce(func.sum(cast(column, Numeric)), 0)
    units = cast(func.round(cast(column, Float) * SCALE), Integer)
    return func.coalesce(func.sum(units), 0)


def sum_value(value: Any, dialect: str) -> Decimal:
    """The Decimal of an `exact_sum` result."""
    if dialect == "postgresql":
        return Decimal(value)
    return Decimal(int(value)) / SCALE


@dataclass(frozen=True, slots=True)
class OutcomeTotal:
    """Rows and amount of one outcome in one currency ("" when the row has none)."""

    currency: str
    outcome: RowOutcome
    rows: int
    amount: Decimal


def outcome_totals(engine: Engine, batch_id: str) -> list[OutcomeTotal]:
    """Rows and amounts per (currency, outcome), by one GROUP BY."""
    dialect = engine.dialect.name
    outcome = outcome_expr()
    # Only a row's own payout counts: a rejected or conflicting row's report line shows the
    # file's amount, which was never to be paid.
    currency = line_currency()
    # What the service says it paid (or holds) once it said so: a platform may change amounts.
    amount = case((BatchRow.disposition.in_(OWN_PAYOUT), service_amount_expr()), else_=None)
    query = (
        joined_rows(batch_id)
        .add_columns(currency, outcome, func.count(), exact_sum(amount, dialect))
        .group_by(currency, outcome)
        .order_by(currency, outcome)
    )
    with engine.connect() as connection:
        return [
            OutcomeTotal(str(cur), RowOutcome(out), int(n), sum_value(total, dialect))
            for cur, out, n, total in connection.execute(query)
        ]


@dataclass(frozen=True, slots=True)
class MessageTotal:
    """Failed (or refused) rows that share a status and a statusMessage, in one currency."""

    currency: str
    state: str
    status_message: str
    rows: int
    amount: Decimal


def failure_totals(engine: Engine, batch_id: str) -> list[MessageTotal]:
    """Rows that did not pay, grouped by currency, state and statusMessage (most rows first)."""
    dialect = engine.dialect.name
    message = func.coalesce(Latest.status_message, "")
    count = func.count()
    unpaid = [S.FAILED.value, S.CANCELED.value, S.EXPIRED.value, S.SUBMIT_REJECTED.value]
    query = (
        joined_rows(batch_id)
        .add_columns(
            Latest.currency, Latest.state, message, count, exact_sum(Latest.amount, dialect)
        )
        .where(
            BatchRow.disposition == Disposition.NEW.value,
            Latest.state.in_(unpaid),
            # A row the service paid after all is not a failure to explain.
            outcome_expr().not_in([o.value for o in PAID_OUTCOMES | PENDING_OUTCOMES]),
        )
        .group_by(Latest.currency, Latest.state, message)
        .order_by(count.desc(), Latest.currency, Latest.state, message)
    )
    with engine.connect() as connection:
        return [
            MessageTotal(str(cur), str(state), str(msg), int(n), sum_value(total, dialect))
            for cur, state, msg, n, total in connection.execute(query)
        ]


@dataclass(frozen=True, slots=True)
class Settlement:
    """How far a batch is from done with the service: rows not final (pending here or at the
    service, or never sent yet) and rows whose service's word the ledger does not hold."""

    not_final: int
    disagreeing: int


NOT_FINAL_OUTCOMES = PENDING_OUTCOMES | {RowOutcome.NOT_SENT}


def settlement(engine: Engine, batch_id: str) -> Settlement:
    """`Settlement` of the batch, counted in SQL over each row's latest attempt."""
    outcome = outcome_expr()
    word = service_status_expr()
    own = BatchRow.disposition.in_(OWN_PAYOUT)
    not_final = case((outcome.in_([o.value for o in NOT_FINAL_OUTCOMES]), 1), else_=0)
    differs = case((and_(own, word.is_not(None), word != Latest.state), 1), else_=0)
    query = joined_rows(batch_id).add_columns(
        func.coalesce(func.sum(not_final), 0), func.coalesce(func.sum(differs), 0)
    )
    with engine.connect() as connection:
        pending, disagreeing = connection.execute(query).one()
    return Settlement(int(pending), int(disagreeing))


@dataclass(frozen=True, slots=True)
class WordDifference:
    """A row whose service's latest word differs from the ledger's state of its payout."""

    row_number: int
    external_id: str
    state: str
    service_status: str
    outcome: RowOutcome
    source: str | None
    at: datetime


def word_differences(engine: Engine, batch_id: str, limit: int) -> list[WordDifference]:
    """The first `limit` rows, by row number, whose service's word differs from the ledger."""
    word = service_status_expr()
    query = (
        joined_rows(batch_id)
        .add_columns(
            BatchRow.row_number,
            Latest.external_id,
            Latest.state,
            word.label("word"),
            outcome_expr().label("outcome"),
            LatestWord.source,
            LatestWord.checked_at,
        )
        .where(BatchRow.disposition.in_(OWN_PAYOUT), word.is_not(None), word != Latest.state)
        .order_by(BatchRow.row_number)
        .limit(limit)
    )
    with engine.connect() as connection:
        return [
            WordDifference(
                int(r.row_number),
                str(r.external_id),
                str(r.state),
                str(r.word),
                RowOutcome(r.outcome),
                r.source,
                r.checked_at,
            )
            for r in connection.execute(query)
        ]


def latest_outcomes(engine: Engine, batch_id: str) -> dict[str, int]:
    """Source rows per outcome, by one GROUP BY."""
    outcome = outcome_expr()
    query = joined_rows(batch_id).add_columns(outcome, func.count()).group_by(outcome)
    with engine.connect() as connection:
        return {str(name): int(n) for name, n in connection.execute(query)}


@dataclass(frozen=True, slots=True)
class PaidTotal:
    """Payouts the service paid in one currency (by its latest word, else the ledger's state)."""

    currency: str
    payouts: int
    amount: Decimal


def _batch_payouts(batch_id: str) -> ColumnElement[bool]:
    """The batch's own payouts and every later attempt of them (reruns in other batches)."""
    own, later = aliased(Payout, name="own"), aliased(Payout, name="later")
    rerun_of_own = (
        select(later.external_id)
        .join(
            own,
            and_(
                later.root_external_id == func.coalesce(own.root_external_id, own.external_id),
                later.attempt > own.attempt,
            ),
        )
        .where(own.batch_id == batch_id)
    )
    return or_(Payout.batch_id == batch_id, Payout.external_id.in_(rerun_of_own))


def service_paid_totals(engine: Engine, batch_id: str) -> list[PaidTotal]:
    """Per currency, the payouts of the batch (its reruns' too) the service paid: every one the
    service's latest word calls COMPLETED (the ledger's COMPLETED where it has no word), at the
    service's amount. After a reconciliation this is the service's own total, a row paid twice
    counted twice."""
    dialect = engine.dialect.name
    word = aliased(ServiceCheck, name="word")
    heard = heard_since(word, Payout)
    status = case((heard, word.status), else_=Payout.state)
    currency = case((heard, func.coalesce(word.currency, Payout.currency)), else_=Payout.currency)
    amount = case((heard, func.coalesce(word.amount, Payout.amount)), else_=Payout.amount)
    query = (
        select(currency, func.count(), exact_sum(amount, dialect))
        .select_from(Payout)
        .outerjoin(word, word.external_id == Payout.external_id)
        .where(_batch_payouts(batch_id), status == S.COMPLETED.value)
        .group_by(currency)
        .order_by(currency)
    )
    with engine.connect() as connection:
        return [
            PaidTotal(str(cur), int(n), sum_value(total, dialect))
            for cur, n, total in connection.execute(query)
        ]


@dataclass(frozen=True, slots=True)
class Movement:
    """Sum of the batch's amounts per currency for one kind of state change after a time."""

    currency: str
    from_state: str | None
    to_state: str
    amount: Decimal


def movements_since(engine: Engine, batch_id: str, since: datetime) -> list[Movement]:
    """State changes recorded after `since` of the batch's own payouts and of their reruns (the
    rows' later attempts, which the report counts), summed per move."""
    dialect = engine.dialect.name
    totals: dict[tuple[str, str | None, str], Decimal] = {}
    for payouts in _batch_payouts(batch_id).clauses:
        query = (
            select(
                Payout.currency,
                StatusEvent.from_state,
                StatusEvent.to_state,
                exact_sum(Payout.amount, dialect),
            )
            .select_from(StatusEvent)
            .join(Payout, Payout.external_id == StatusEvent.external_id)
            .where(payouts, StatusEvent.at >= since)
            .group_by(Payout.currency, StatusEvent.from_state, StatusEvent.to_state)
        )
        with engine.connect() as connection:
            for cur, before, after, total in connection.execute(query):
                key = (str(cur), before, str(after))
                totals[key] = totals.get(key, Decimal(0)) + sum_value(total, dialect)
    return [Movement(cur, before, after, amount) for (cur, before, after), amount in totals.items()]


@dataclass(frozen=True, slots=True)
class OtherMovement:
    """Another batch's state changes of one kind in one currency within a time window."""

    batch_id: str
    currency: str
    from_state: str | None
    to_state: str
    amount: Decimal


def other_movements(
    engine: Engine, batch_id: str, since: datetime, until: datetime
) -> list[OtherMovement]:
    """State changes recorded in [since, until] of payouts of this ledger that are neither the
    batch's own nor their reruns: what other batches moved the balance by meanwhile."""
    dialect = engine.dialect.name
    query = (
        select(
            Payout.batch_id,
            Payout.currency,
            StatusEvent.from_state,
            StatusEvent.to_state,
            exact_sum(Payout.amount, dialect),
        )
        .select_from(StatusEvent)
        .join(Payout, Payout.external_id == StatusEvent.external_id)
        .where(~_batch_payouts(batch_id), StatusEvent.at >= since, StatusEvent.at <= until)
        .group_by(Payout.batch_id, Payout.currency, StatusEvent.from_state, StatusEvent.to_state)
    )
    with engine.connect() as connection:
        return [
            OtherMovement(str(b), str(cur), before, str(after), sum_value(total, dialect))
            for b, cur, before, after, total in connection.execute(query)
        ]


@dataclass(frozen=True, slots=True)
class ReportLine:
    """One source row with the ledger's and the service's view of its latest attempt (its own
    payout unless it was rerun); requisites NOT masked."""

    row_number: int
    external_id: str | None
    disposition: str
    first_batch_id: str | None
    payout_id: str | None
    payment_type: str | None
    currency: str | None
    amount: Decimal | None
    service_amount: Decimal | None
    requisites: str | None
    name: str | None
    bank_name: str | None
    state: str
    service_status: str | None
    outcome: RowOutcome
    status_message: str | None
    reasons: str | None  # JSON list for rejected rows
    submitted_at: datetime | None
    final_status_at: datetime | None  # paid or not: COMPLETED, FAILED, CANCELED, EXPIRED
    checked_at: datetime | None
    earlier: str | None  # when rerun: the externalIds of the row's attempts before this one
    findings: str | None  # open or acknowledged finding kinds
    unsent: UnsentReason | None = None  # why the row has no payout of its own, if it has none
    service_message: str | None = None  # the statusMessage of the service's latest word
    service_source: str | None = None  # how that word was learned (`service_word.WordSource`)
    # The ledger state of the payout the row's externalId names (another batch's for a
    # CONFLICT or duplicate row): what the advice for such a row is checked against.
    known_state: str | None = None


def _aggregate_text(column: Any, dialect: str) -> ColumnElement[Any]:
    if dialect == "postgresql":
        return func.string_agg(column, literal(" "))
    return func.group_concat(column, literal(" "))


def report_lines(engine: Engine, batch_id: str) -> Iterator[ReportLine]:
    """Every source row of the batch in row order, streamed a page at a time."""
    dialect = engine.dialect.name
    finals = [S.COMPLETED.value, S.FAILED.value, S.CANCELED.value, S.EXPIRED.value]
    # Correlated lookups on the status_events index: a page costs its own rows, not the batch's.
    submitted_at = (
        select(func.min(StatusEvent.at))
        .where(
            StatusEvent.external_id == Latest.external_id,
            StatusEvent.from_state == S.SUBMITTING.value,
        )
        .correlate(Latest)
        .scalar_subquery()
    )
    final_status_at = (
        select(func.max(StatusEvent.at))
        .where(StatusEvent.external_id == Latest.external_id, StatusEvent.to_state.in_(finals))
        .correlate(Latest)
        .scalar_subquery()
    )
    # The row's earlier attempts when it was rerun: its root and the reruns before the latest.
    earlier_attempt = aliased(Payout, name="earlier_attempt")
    root = func.coalesce(Latest.root_external_id, Latest.external_id)
    earlier = case(
        (
            Latest.attempt > 0,
            select(_aggregate_text(earlier_attempt.external_id, dialect))
            .where(
                or_(earlier_attempt.root_external_id == root, earlier_attempt.external_id == root),
                earlier_attempt.attempt < Latest.attempt,
            )
            .correlate(Latest)
            .scalar_subquery(),
        ),
        else_=None,
    )
    open_findings = (
        select(
            Finding.row_number.label("row_number"),
            _aggregate_text(Finding.kind, dialect).label("findings"),
        )
        .where(Finding.batch_id == batch_id, Finding.state != "resolved")
        .group_by(Finding.row_number)
        .subquery()
    )
    # A row's own payout is followed to its latest attempt; a rejected or conflicting row keeps
    # its own externalId (a payout under it, if any, is another batch's).
    external_id = case(
        (
            BatchRow.disposition.in_(OWN_PAYOUT),
            func.coalesce(Latest.external_id, BatchRow.external_id),
        ),
        else_=BatchRow.external_id,
    )
    columns = select(
        BatchRow.row_number,
        external_id.label("external_id"),
        BatchRow.disposition,
        BatchRow.reasons,
        BatchRow.currency.label("row_currency"),
        BatchRow.amount.label("row_amount"),
        BatchRow.payment_type.label("row_payment_type"),
        BatchRow.name.label("row_name"),
        BatchRow.requisites_masked.label("row_requisites_masked"),
        Payout.batch_id.label("first_batch_id"),
        Latest.payout_id,
        Latest.payment_type,
        Latest.currency,
        Latest.amount,
        Latest.requisites,
        Latest.name,
        Latest.bank_name,
        Latest.state,
        Latest.status_message,
        ServiceCheck.amount.label("service_amount"),
        ServiceCheck.status.label("service_status"),
        ServiceCheck.found.label("service_found"),
        ServiceCheck.checked_at,
        ServiceCheck.status_message.label("service_message"),
        ServiceCheck.source.label("service_source"),
        Payout.state.label("known_state"),
        submitted_at.label("submitted_at"),
        final_status_at.label("final_status_at"),
        earlier.label("earlier"),
        open_findings.c.findings,
        outcome_expr().label("outcome"),
        unsent_expr().label("unsent"),
    ).select_from(BatchRow)
    base = (
        join_latest_attempt(columns)
        .outerjoin(ServiceCheck, ServiceCheck.external_id == external_id)
        .outerjoin(open_findings, open_findings.c.row_number == BatchRow.row_number)
        .where(BatchRow.batch_id == batch_id)
        .order_by(BatchRow.row_number)
        .limit(STREAM_ROWS)
    )
    return by_row_number(engine, base, _line, STREAM_ROWS)


def _line(row: Any) -> ReportLine:
    disposition = str(row.disposition)
    own = disposition in OWN_PAYOUT
    if disposition in (Disposition.REJECTED.value, Disposition.CONFLICT.value):
        state = disposition
    else:
        state = str(row.state)
    service_status = row.service_status
    if row.service_found is not None and not row.service_found:
        service_status = "NOT_FOUND"
    return ReportLine(
        row_number=int(row.row_number),
        external_id=row.external_id,
        disposition=disposition,
        first_batch_id=row.first_batch_id,
        payout_id=row.payout_id if own else None,
        # A rejected or conflicting row shows its own cells: the operator fixes the row by them.
        payment_type=row.payment_type if own else row.row_payment_type,
        currency=row.currency if own else row.row_currency,
        amount=row.amount if own else row.row_amount,
        service_amount=row.service_amount if own else None,
        # Never the whole: the ledger keeps only the masked form of a row not its payout's.
        requisites=row.requisites if own else row.row_requisites_masked,
        name=row.name if own else row.row_name,
        bank_name=row.bank_name if own else None,
        state=state,
        service_status=service_status,
        outcome=RowOutcome(row.outcome),
        status_message=row.status_message if own else None,
        reasons=row.reasons,
        submitted_at=row.submitted_at if own else None,
        final_status_at=row.final_status_at if own else None,
        checked_at=row.checked_at,
        earlier=row.earlier,
        findings=row.findings,
        unsent=None if row.unsent is None else UnsentReason(row.unsent),
        service_message=row.service_message,
        service_source=row.service_source,
        known_state=row.known_state,
    )


def batches_with(engine: Engine, states: list[str], since: datetime | None = None) -> list[str]:
    """Batch ids owning a payout in one of `states` (last news at or after `since`)."""
    condition: ColumnElement[bool] = Payout.state.in_(states)
    if since is not None:
        condition = and_(condition, or_(Payout.last_status_at >= since, Payout.updated_at >= since))
    query = select(Payout.batch_id).where(condition).distinct().order_by(Payout.batch_id)
    with engine.connect() as connection:
        return [str(b) for b in connection.scalars(query)]


# Words that are the payout's own news, not a re-fetch: the pay run's webhooks and polls
# (a row written before revision 0019 has no source and came from a reconciliation).
_NEWS = (WordSource.WEBHOOK.value, WordSource.POLL.value)


def _not_rechecked() -> ColumnElement[bool]:
    """A payout the service has not been asked about since the ledger last changed it: sent
    (it has a payout id), and no re-fetch (a reconciliation, a rerun's check) stored the
    service's answer after its news. The webhook or poll that brought the news is no
    re-check: a correction a second later was missed by a run that read it once."""
    return and_(
        Payout.payout_id.is_not(None),
        or_(
            ServiceCheck.external_id.is_(None),
            ServiceCheck.source.in_(_NEWS),
            ServiceCheck.checked_at < Payout.updated_at,
        ),
    )


def not_rechecked(engine: Engine, batch_id: str) -> int:
    """How many of the batch's sent payouts no reconciliation re-fetched since their news."""
    query = (
        select(func.count())
        .select_from(Payout)
        .outerjoin(ServiceCheck, ServiceCheck.external_id == Payout.external_id)
        .where(Payout.batch_id == batch_id, _not_rechecked())
    )
    with engine.connect() as connection:
        return int(connection.scalar(query) or 0)


def batches_not_rechecked(engine: Engine) -> list[str]:
    """Batch ids owning a sent payout no reconciliation re-fetched since its news."""
    query = (
        select(Payout.batch_id)
        .outerjoin(ServiceCheck, ServiceCheck.external_id == Payout.external_id)
        .where(_not_rechecked())
        .distinct()
        .order_by(Payout.batch_id)
    )
    with engine.connect() as connection:
        return [str(b) for b in connection.scalars(query)]


def rerun_links(engine: Engine) -> list[tuple[str, str, str]]:
    """(externalId, the externalId it reruns, its state) for every rerun payout."""
    query = select(Payout.external_id, Payout.reruns_external_id, Payout.state).where(
        Payout.reruns_external_id.is_not(None)
    )
    with engine.connect() as connection:
        return [(str(a), str(b), str(s)) for a, b, s in connection.execute(query)]


def payout_states(engine: Engine, external_ids: list[str]) -> dict[str, str]:
    """The ledger state of each named payout that exists."""
    if not external_ids:
        return {}
    query = select(Payout.external_id, Payout.state).where(Payout.external_id.in_(external_ids))
    with engine.connect() as connection:
        return {str(a): str(s) for a, s in connection.execute(query)}


def open_finding_counts(engine: Engine, batch_id: str) -> dict[tuple[str, str], int]:
    """Open or acknowledged findings per (currency, kind)."""
    currency = func.coalesce(Payout.currency, "")
    query = (
        select(currency, Finding.kind, func.count())
        .select_from(Finding)
        .join(
            BatchRow,
            and_(BatchRow.batch_id == Finding.batch_id, BatchRow.row_number == Finding.row_number),
        )
        .outerjoin(Payout, Payout.external_id == BatchRow.external_id)
        .where(Finding.batch_id == batch_id, Finding.state != "resolved")
        .group_by(currency, Finding.kind)
    )
    with engine.connect() as connection:
        return {(str(cur), str(kind)): int(n) for cur, kind, n in connection.execute(query)}
