"""Approval records (append-only) and the batch facts an approval is bound to.

Nothing here updates or deletes an approval: a decision is a new line. The policy (how many
steps, what voids an approval) lives in `payflow.approvals`; this module only reads and appends.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import Engine, Float, and_, cast, exists, func, insert, or_, select, update
from sqlalchemy.orm import aliased

from payflow.ledger.claims import in_batch
from payflow.ledger.outflow import outflow_rows
from payflow.ledger.states import MAY_SEND_STATES
from payflow.ledger.tables import Approval, Batch, Payout
from payflow.model import canonical_amount


@dataclass(frozen=True, slots=True)
class BatchFacts:
    """What an approver approves: the content hash, totals and size, plus maker and age."""

    batch_id: str
    content_hash: str
    totals: dict[str, Decimal]
    rows: int
    made_by: str | None
    created_at: datetime
    rerun_of: str | None
    large_rows: tuple[tuple[str, str, Decimal], ...] = ()  # filled by the policy's row limit


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One line of the approvals table."""

    batch_id: str
    approver: str
    decision: str
    at: datetime
    content_hash: str
    totals: dict[str, Decimal]
    rows: int
    acknowledged: tuple[str, ...]
    note: str | None
    via: str


def batch_facts(engine: Engine, batch_id: str) -> BatchFacts | None:
    """The batch's content hash (over every payout it is responsible for), totals and rows."""
    with engine.connect() as connection:
        batch = connection.execute(
            select(Batch.__table__).where(Batch.batch_id == batch_id)
        ).first()
        if batch is None:
            return None
        rows = connection.execute(
            select(Payout.external_id, Payout.content_hash, Payout.amount, Payout.currency)
            .where(in_batch(batch_id))
            .order_by(Payout.external_id)
        ).all()
        # A refund or links batch's rows (a payout batch has none): approved as payouts are.
        others = [row for _, row in outflow_rows(connection, batch_id)]
    digest = hashlib.sha256()
    totals: dict[str, Decimal] = {}
    for external_id, content, amount, currency in [tuple(r)[:4] for r in (*rows, *others)]:
        digest.update(f"{external_id}\x1f{content}\x1e".encode())
        totals[currency] = totals.get(currency, Decimal(0)) + amount
    record = batch
    return BatchFacts(
        batch_id=batch_id,
        content_hash=digest.hexdigest(),
        totals=totals,
        rows=len(rows) + len(others),
        made_by=record.made_by,
        created_at=record.created_at,
        rerun_of=record.rerun_of,
    )


def rows_above(
    engine: Engine, batch_id: str, limits: dict[str, Decimal]
) -> list[tuple[str, str, Decimal]]:
    """(externalId, currency, amount) of the batch's payouts it may still send (a payout made
    already, by this batch or another, is not approved again) above their currency's limit."""
    if not limits:
        return []
    # Amounts are exact text: a double in SQL only narrows the rows read, with a margin wider
    # than any rounding (amount > limit gives float(amount) >= float(limit)); Decimal decides.
    near = or_(
        *(
            and_(Payout.currency == currency, cast(Payout.amount, Float) > _below(limit))
            for currency, limit in limits.items()
        )
    )
    with engine.connect() as connection:
        rows = connection.execute(
            select(Payout.external_id, Payout.currency, Payout.amount)
            .where(
                in_batch(batch_id),
                near,
                Payout.state.in_([s.value for s in MAY_SEND_STATES]),
            )
            .order_by(Payout.external_id)
        ).all()
    return [(r.external_id, r.currency, r.amount) for r in rows if r.amount > limits[r.currency]]


def _below(limit: Decimal) -> float:
    """A float under `limit` by more than a double's rounding of it or of an amount near it."""
    bound = float(limit)
    return bound - abs(bound) * 1e-9 - 1


def similar_batches(
    engine: Engine, batch_id: str, until: datetime, days: int = 30
) -> list[tuple[str, int]]:
    """Batches registered in the `days` before `until` (this batch's registration) sharing
    payout contents with this one, with the count of shared contents, most similar first."""
    mine = aliased(Payout)
    other = aliased(Payout)
    shared = func.count(func.distinct(other.content_hash))
    query = (
        select(other.batch_id, shared)
        .select_from(mine)
        .join(
            other,
            and_(
                other.content_hash == mine.content_hash,
                # A rerun resends its own root's content: that is not a copied file.
                func.coalesce(other.root_external_id, other.external_id)
                != func.coalesce(mine.root_external_id, mine.external_id),
            ),
        )
        .join(Batch, Batch.batch_id == other.batch_id)
        .where(
            mine.batch_id == batch_id,
            other.batch_id != batch_id,
            Batch.created_at >= until - timedelta(days=days),
            Batch.created_at <= until,
            # A declined batch pays nobody: a file like it is no copy to warn about.
            ~exists().where(Approval.batch_id == other.batch_id, Approval.decision == "decline"),
        )
        .group_by(other.batch_id)
        .order_by(shared.desc())
    )
    with engine.connect() as connection:
        return [(str(b), int(n)) for b, n in connection.execute(query)]


def totals_json(totals: dict[str, Decimal]) -> str:
    """Totals as stable JSON text (exact amounts, sorted currencies)."""
    return json.dumps({c: canonical_amount(a) for c, a in sorted(totals.items())})


def append_approval(engine: Engine, record: ApprovalRecord) -> None:
    """Append one decision; nothing ever updates or deletes one."""
    with engine.begin() as connection:
        connection.execute(
            insert(Approval).values(
                batch_id=record.batch_id,
                approver=record.approver,
                decision=record.decision,
                at=record.at,
                content_hash=record.content_hash,
                totals=totals_json(record.totals),
                rows=record.rows,
                acknowledged=json.dumps(sorted(record.acknowledged)),
                note=record.note,
                via=record.via,
            )
        )


def approvals_of(engine: Engine, batch_id: str) -> list[ApprovalRecord]:
    """Every decision on the batch, oldest first."""
    query = select(Approval.__table__).where(Approval.batch_id == batch_id).order_by(Approval.id)
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [
        ApprovalRecord(
            batch_id=r.batch_id,
            approver=r.approver,
            decision=r.decision,
            at=r.at,
            content_hash=r.content_hash,
            totals={c: Decimal(a) for c, a in json.loads(r.totals).items()},
            rows=r.rows,
            acknowledged=tuple(json.loads(r.acknowledged)),
            note=r.note,
            via=r.via,
        )
        for r in rows
    ]


def set_maker(engine: Engine, batch_id: str, maker: str) -> bool:
    """Record who made the batch, once (a later call never changes it). True when written."""
    with engine.begin() as connection:
        result = connection.execute(
            update(Batch)
            .where(Batch.batch_id == batch_id, Batch.made_by.is_(None))
            .values(made_by=maker)
        )
    return bool(result.rowcount)
