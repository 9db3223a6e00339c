"""Rerun attempts: a failed payout sent again as a new payout linked to its parent and root.

A root (the first payout of a row) and its attempts form one chain: the unique constraint on
`payouts.reruns_external_id` lets each payout have at most one child, so a root has at most one
live attempt however many reruns race. `create_attempts` inserts with ON CONFLICT DO NOTHING,
so the loser of a race inserts nothing and says which attempt already exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    and_,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.orm import aliased

from payflow.ledger.db import dialect_insert
from payflow.ledger.records import OWN_PAYOUT, Disposition
from payflow.ledger.repeats import hold_repeats
from payflow.ledger.states import RowState
from payflow.ledger.tables import (
    INSTRUCTION_COLUMNS,
    INSTRUCTION_FIELDS,
    Batch,
    BatchRow,
    Payout,
    ServiceCheck,
    instruction_from_row,
)
from payflow.model import PayoutInstruction

RERUNNABLE_STATES = frozenset(
    {RowState.FAILED, RowState.CANCELED, RowState.EXPIRED, RowState.SUBMIT_REJECTED}
)
"""States a payout may be rerun from (a COMPLETED payout corrected to FAILED is FAILED)."""


@dataclass(frozen=True, slots=True)
class AttemptView:
    """One source row of a batch seen through the latest attempt of its root."""

    row_number: int
    root_external_id: str | None
    disposition: Disposition
    external_id: str | None  # the latest attempt's (the root itself when never rerun)
    attempt: int
    batch_id: str | None  # the batch that registered the latest attempt
    state: RowState
    payout_id: str | None
    status_message: str | None
    amount: Decimal | None
    currency: str | None
    payment_type: str | None
    requisites: str | None
    corrected: bool
    # The row's outcome (a `totals.RowOutcome` value), from the service's word once it has one.
    outcome: str = ""
    service_status: str | None = None  # the service's latest word about the latest attempt
    service_amount: Decimal | None = None

    @property
    def paid_by_service(self) -> bool:
        """The service paid the row (this attempt or an earlier one), whatever the ledger says."""
        return self.outcome.startswith("paid")


@dataclass(frozen=True, slots=True)
class NewAttempt:
    """A payout to create as the next attempt of `parent_external_id` (in `instruction`)."""

    parent_external_id: str
    root_external_id: str
    attempt: int
    instruction: PayoutInstruction


@dataclass(frozen=True, slots=True)
class ParentView:
    """A rerun batch's attempt and the attempt it sends again (its parent), as the ledger holds
    that parent now: what failed, and whether the new attempt goes to the same requisites."""

    row_number: int
    external_id: str
    parent_external_id: str
    parent_state: RowState
    parent_status_message: str | None
    same_requisites: bool
    amount: Decimal  # what the new attempt sends
    currency: str


@dataclass
class AttemptsOutcome:
    """What `create_attempts` did: created now, created by an earlier identical call, refused."""

    batch_id: str
    created: list[str] = field(default_factory=list)
    already_created: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # parent externalId -> reason


# A row's latest attempt: its own payout, or the newest rerun of it. Reports and reruns count
# each row once, by this payout (a row paid by a rerun is paid; its failed first try is history).
Latest = aliased(Payout, name="latest")


def _latest_attempt_id() -> Any:
    """The externalId of the newest rerun of the row's payout (None when never rerun), found on
    the (root_external_id, attempt) unique index, one row at a time."""
    later = aliased(Payout, name="later")
    return (
        select(later.external_id)
        .where(later.root_external_id == func.coalesce(Payout.root_external_id, Payout.external_id))
        .order_by(later.attempt.desc())
        .limit(1)
        .correlate(Payout)
        .scalar_subquery()
    )


# The service's latest word about the row's latest attempt (None until the ledger has one).
LatestWord = aliased(ServiceCheck, name="latest_word")


def join_latest_attempt(query: Any) -> Any:
    """`query` over batch_rows joined to each row's payout (`Payout`), then to its latest
    attempt (`Latest`) and the service's latest word about it (`LatestWord`)."""
    return (
        query.outerjoin(Payout, Payout.external_id == BatchRow.external_id)
        .outerjoin(
            Latest, Latest.external_id == func.coalesce(_latest_attempt_id(), Payout.external_id)
        )
        .outerjoin(LatestWord, LatestWord.external_id == Latest.external_id)
    )


def heard_since(word: Any, payout: Any) -> Any:
    """The service's word about `payout` stands: it was found, and said at or after the
    ledger's last news of the payout. A move the ledger recorded later (a lookup adopting a
    finished payout after an older poll's word) is the newer word."""
    return and_(
        word.found == true(),
        or_(payout.last_status_at.is_(None), word.checked_at >= payout.last_status_at),
    )


def service_status_expr() -> Any:
    """The status the service last gave the row's latest attempt (None: no word that stands)."""
    return case((heard_since(LatestWord, Latest), LatestWord.status), else_=None)


def service_amount_expr() -> Any:
    """The amount of a row's latest attempt: the service's word when it gave one, else the
    ledger's (what was sent)."""
    return func.coalesce(
        case((heard_since(LatestWord, Latest), LatestWord.amount), else_=None), Latest.amount
    )


def earlier_paid_expr() -> Any:
    """Whether the service's word says an earlier attempt of the row's root was COMPLETED (a
    failed first try the platform paid after all)."""
    earlier = aliased(Payout, name="earlier_paid")
    word = aliased(ServiceCheck, name="earlier_word")
    root = func.coalesce(Latest.root_external_id, Latest.external_id)
    return (
        select(earlier.external_id)
        .join(word, word.external_id == earlier.external_id)
        .where(
            or_(earlier.external_id == root, earlier.root_external_id == root),
            earlier.attempt < Latest.attempt,
            heard_since(word, earlier),
            word.status == RowState.COMPLETED.value,
        )
        .correlate(Latest)
        .exists()
    )


def joined_rows(batch_id: str) -> Any:
    """The batch's rows joined to their latest attempts, to add columns to."""
    return join_latest_attempt(select().select_from(BatchRow)).where(BatchRow.batch_id == batch_id)


def line_currency() -> Any:
    """The currency of a row's report line over `joined_rows` ("" for none): its payout's when
    the payout is its own, else the row's own (a rejected or conflicting row's; its externalId
    may be another batch's payout in another currency)."""
    own = BatchRow.disposition.in_(OWN_PAYOUT)
    return case(
        (own, func.coalesce(Latest.currency, "")), else_=func.coalesce(BatchRow.currency, "")
    )


def latest_attempts(engine: Engine, batch_id: str) -> list[AttemptView]:
    """Every source row of the batch once, by the latest attempt of its root, with its outcome
    (the service's word first) and the service's latest word about it."""
    # totals builds on this module; the one definition of an outcome lives there.
    from payflow.ledger.totals import outcome_expr

    root = func.coalesce(Payout.root_external_id, Payout.external_id)
    columns = select(
        BatchRow.row_number,
        BatchRow.disposition,
        root.label("root"),
        Latest.external_id,
        Latest.attempt,
        Latest.batch_id,
        Latest.state,
        Latest.payout_id,
        Latest.status_message,
        Latest.amount,
        Latest.currency,
        Latest.payment_type,
        Latest.requisites,
        Latest.corrected,
        outcome_expr().label("outcome"),
        service_status_expr().label("service_status"),
        case((heard_since(LatestWord, Latest), LatestWord.amount), else_=None).label(
            "service_amount"
        ),
    ).select_from(BatchRow)
    query = (
        join_latest_attempt(columns)
        .where(BatchRow.batch_id == batch_id)
        .order_by(BatchRow.row_number)
    )
    with engine.connect() as connection:
        return [_view(row) for row in connection.execute(query)]


def latest_summary(engine: Engine, batch_id: str) -> dict[str, int]:
    """Source rows per state of each row's latest attempt, counted in SQL (as `_view` reads a
    row: REJECTED and CONFLICT as such, a row with no payout REJECTED)."""
    state = case(
        (BatchRow.disposition == Disposition.CONFLICT.value, RowState.CONFLICT.value),
        (BatchRow.disposition == Disposition.REJECTED.value, RowState.REJECTED.value),
        else_=func.coalesce(Latest.state, RowState.REJECTED.value),
    )
    query = join_latest_attempt(select(state, func.count()).select_from(BatchRow))
    query = query.where(BatchRow.batch_id == batch_id).group_by(state)
    with engine.connect() as connection:
        return {str(name): int(count) for name, count in connection.execute(query)}


def _view(row: Any) -> AttemptView:
    disposition = Disposition(row.disposition)
    if disposition in (Disposition.REJECTED, Disposition.CONFLICT) or row.state is None:
        # A CONFLICT row points at someone else's payout: never show that payout as this row's.
        state = RowState.CONFLICT if disposition is Disposition.CONFLICT else RowState.REJECTED
        return AttemptView(
            row.row_number, None, disposition, None, 0, None, state,
            None, None, None, None, None, None, False, row.outcome,
        )  # fmt: skip
    return AttemptView(
        row_number=row.row_number,
        root_external_id=row.root,
        disposition=disposition,
        external_id=row.external_id,
        attempt=row.attempt,
        batch_id=row.batch_id,
        state=RowState(row.state),
        payout_id=row.payout_id,
        status_message=row.status_message,
        amount=row.amount,
        currency=row.currency,
        payment_type=row.payment_type,
        requisites=row.requisites,
        corrected=bool(row.corrected),
        outcome=row.outcome,
        service_status=row.service_status,
        service_amount=row.service_amount,
    )


def rerun_parents(engine: Engine, batch_id: str) -> list[ParentView]:
    """The batch's attempts that send a payout again, each with its parent, by row number."""
    parent = aliased(Payout, name="parent")
    query = (
        select(
            Payout.row_number,
            Payout.external_id,
            parent.external_id.label("parent_external_id"),
            parent.state,
            parent.status_message,
            (Payout.requisites == parent.requisites).label("same_requisites"),
            Payout.amount,
            Payout.currency,
        )
        .join(parent, parent.external_id == Payout.reruns_external_id)
        .where(Payout.batch_id == batch_id)
        .order_by(Payout.row_number, Payout.external_id)
    )
    with engine.connect() as connection:
        return [
            ParentView(
                row.row_number,
                row.external_id,
                row.parent_external_id,
                RowState(row.state),
                row.status_message,
                bool(row.same_requisites),
                row.amount,
                row.currency,
            )
            for row in connection.execute(query)
        ]


def payout_instruction(engine: Engine, external_id: str) -> PayoutInstruction | None:
    """The stored instruction of one payout (what was sent), or None when unknown."""
    query = select(*INSTRUCTION_COLUMNS).where(Payout.external_id == external_id)
    with engine.connect() as connection:
        row = connection.execute(query).first()
    return None if row is None else instruction_from_row(row)


def _insert_ignoring_conflicts(connection: Connection, table: Any, values: dict[str, Any]) -> int:
    """INSERT one row; 0 when a unique constraint already holds an equal key (a lost race)."""
    statement = dialect_insert(connection, table).values(values).on_conflict_do_nothing()
    return int(connection.execute(statement).rowcount or 0)


def _child_values(item: NewAttempt, batch_id: str, now: datetime) -> dict[str, Any]:
    instruction = item.instruction
    values = {name: getattr(instruction, name) for name in INSTRUCTION_FIELDS}
    values.update(
        content_hash=instruction.content_hash(),
        # An attempt in flight is a payment a later batch's repeat must be held against.
        repeat_key=instruction.repeat_key(),
        user_key=instruction.user_key(),
        name_key=instruction.name_key(),
        batch_id=batch_id,
        state=RowState.VALIDATED.value,
        attempts=0,
        corrected=False,
        reruns_external_id=item.parent_external_id,
        root_external_id=item.root_external_id,
        attempt=item.attempt,
        created_at=now,
        updated_at=now,
    )
    return values


def _parent_state(connection: Connection, external_id: str) -> RowState | None:
    query = select(Payout.state).where(Payout.external_id == external_id).with_for_update()
    state = connection.scalar(query)
    return None if state is None else RowState(state)


def _existing_child(connection: Connection, parent: str) -> tuple[str, str] | None:
    row = connection.execute(
        select(Payout.external_id, Payout.batch_id).where(Payout.reruns_external_id == parent)
    ).first()
    return None if row is None else (row.external_id, row.batch_id)


def _create_one(
    connection: Connection, batch_id: str, item: NewAttempt, now: datetime, out: AttemptsOutcome
) -> None:
    parent = item.parent_external_id
    new_id = item.instruction.external_id
    state = _parent_state(connection, parent)
    child = _existing_child(connection, parent)
    if child is not None:
        if child == (new_id, batch_id):
            out.already_created.append(new_id)
        else:
            out.refused[parent] = f"already rerun as {child[0]} (batch {child[1]})"
        return
    if state not in RERUNNABLE_STATES:
        out.refused[parent] = f"is {state or 'unknown'} in the ledger, not a failed final state"
        return
    if _insert_ignoring_conflicts(connection, Payout.__table__, _child_values(item, batch_id, now)):
        row = {
            "batch_id": batch_id,
            "row_number": item.instruction.row_number,
            "external_id": new_id,
            "disposition": Disposition.NEW.value,
        }
        connection.execute(insert(BatchRow).values(row))
        out.created.append(new_id)
        return
    # Another rerun inserted first (it held the unique key until it committed).
    child = _existing_child(connection, parent)
    taken = f"already rerun as {child[0]} (batch {child[1]})" if child else None
    out.refused[parent] = taken or f"externalId {new_id!r} is already used by another payout"


def create_attempts(
    engine: Engine,
    batch_id: str,
    *,
    rerun_of: str,
    source_name: str,
    made_by: str | None,
    attempts: Sequence[NewAttempt],
    now: datetime,
) -> AttemptsOutcome:
    """Register `attempts` as the rerun batch `batch_id` in one transaction; see the module."""
    out = AttemptsOutcome(batch_id)
    with engine.begin() as connection:
        batch = {
            "batch_id": batch_id,
            "source_name": source_name,
            "total_rows": len(attempts),
            "valid_rows": len(attempts),
            "rejected_rows": 0,
            "created_at": now,
            "rerun_of": rerun_of,
            "made_by": made_by,
        }
        # Two identical reruns at once: the second waits for the first's batch row, then skips.
        fresh = _insert_ignoring_conflicts(connection, Batch.__table__, batch) == 1
        for item in sorted(attempts, key=lambda a: a.parent_external_id):
            _create_one(connection, batch_id, item, now, out)
        if out.created:
            # A corrected attempt may pay a recipient another row already paid the same amount:
            # held as any batch's repeat is, and released the same way (--allow-repeat).
            hold_repeats(connection, batch_id, now)
        if fresh and not out.created:
            connection.execute(delete(Batch).where(Batch.batch_id == batch_id))
        elif fresh:
            connection.execute(
                update(Batch)
                .where(Batch.batch_id == batch_id)
                .values(total_rows=len(out.created), valid_rows=len(out.created))
            )
    return out


def earlier_attempts(engine: Engine, root_external_id: str, before: int) -> list[str]:
    """The externalIds of the root's attempts before attempt `before` (the root first)."""
    query = (
        select(Payout.external_id)
        .where(
            (Payout.external_id == root_external_id)
            | (Payout.root_external_id == root_external_id),
            Payout.attempt < before,
        )
        .order_by(Payout.attempt)
    )
    with engine.connect() as connection:
        return list(connection.scalars(query))


def rerun_batches(engine: Engine, batch_id: str) -> list[str]:
    """Ids of the rerun batches registered for `batch_id`, oldest first."""
    query = select(Batch.batch_id).where(Batch.rerun_of == batch_id).order_by(Batch.created_at)
    with engine.connect() as connection:
        return list(connection.scalars(query))
