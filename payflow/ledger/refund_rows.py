"""The writes and reads behind RefundBook: row values, locked loads, forward-only moves, views.

Every status change goes through `apply_move`, which asks `states.check_move(..., REFUNDS)`,
writes the row guarded by its current state and appends one `refund_events` line.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, insert, select, update

from payflow.ledger.records import Disposition, LedgerError
from payflow.ledger.refund_records import RefundRowView, UnknownRefund
from payflow.ledger.states import REFUNDS, EventSource, Move, RowState, check_move
from payflow.ledger.tables import Refund, RefundEvent
from payflow.model import RefundInstruction

S = RowState


def refund_values(item: RefundInstruction, batch_id: str, now: datetime) -> dict[str, Any]:
    return {
        "external_id": item.external_id,
        "batch_id": batch_id,
        "row_number": item.row_number,
        "content_hash": item.content_hash(),
        "order_id": item.order_id,
        "amount": item.amount,
        "currency": item.currency,
        "amount_given": item.amount_given,
        "reason": item.reason,
        "callback_url": item.callback_url,
        "state": S.VALIDATED.value,
        "attempts": 0,
        "corrected": False,
        "created_at": now,
        "updated_at": now,
    }


def source_row(
    batch_id: str,
    row_number: int,
    external_id: str | None,
    order_id: str | None,
    disposition: Disposition,
    reasons: str | None,
) -> dict[str, Any]:
    return {
        "batch_id": batch_id,
        "row_number": row_number,
        "external_id": external_id,
        "order_id": order_id,
        "disposition": disposition.value,
        "reasons": reasons,
    }


def event_values(
    external_id: str,
    from_state: RowState | None,
    to_state: RowState,
    source: EventSource,
    at: datetime,
    message: str | None,
) -> dict[str, Any]:
    return {
        "external_id": external_id,
        "from_state": None if from_state is None else from_state.value,
        "to_state": to_state.value,
        "source": source.value,
        "at": at,
        "status_message": message,
    }


def load_for_update(
    connection: Connection, *, external_id: str | None = None, refund_id: str | None = None
) -> Row[Any]:
    query = select(
        Refund.id, Refund.external_id, Refund.state, Refund.refund_id, Refund.claimed_by
    ).with_for_update()
    if external_id is not None:
        query = query.where(Refund.external_id == external_id)
    elif refund_id is not None:
        query = query.where(Refund.refund_id == refund_id)
    else:
        raise ValueError("give an external_id or a refund_id")
    row = connection.execute(query).first()
    if row is None:
        raise UnknownRefund(f"no refund for externalId={external_id!r} refundId={refund_id!r}")
    if refund_id is not None and row.refund_id not in (None, refund_id):
        # Two service refunds for one externalId would be a double refund: stop loudly.
        raise LedgerError(f"refund {row.external_id!r} has refund {row.refund_id}, not {refund_id}")
    return row


def apply_move(
    connection: Connection,
    row: Row[Any],
    new: RowState,
    source: EventSource,
    now: datetime,
    values: dict[str, Any],
    message: str | None,
) -> bool:
    current = S(row.state)
    if check_move(row.external_id, current, new, REFUNDS) is Move.STALE:
        if values:
            write_values(connection, row, current, now, values)
        return False
    values = {**values, "state": new.value, "status_message": message}
    if current == S.SUBMITTING:
        values.update(claimed_by=None, lease_until=None)
    if (current, new) in REFUNDS.corrections:
        values["corrected"] = True
    write_values(connection, row, current, now, values)
    connection.execute(
        insert(RefundEvent), [event_values(row.external_id, current, new, source, now, message)]
    )
    return True


def write_values(
    connection: Connection,
    row: Row[Any],
    current: RowState,
    now: datetime,
    values: dict[str, Any],
) -> None:
    connection.execute(
        update(Refund)
        .where(Refund.id == row.id, Refund.state == current.value)
        .values(**values, updated_at=now)
    )


def was_ever(connection: Connection, external_id: str, state: RowState) -> bool:
    query = select(RefundEvent.id).where(
        RefundEvent.external_id == external_id, RefundEvent.to_state == state.value
    )
    return connection.scalar(query.limit(1)) is not None


VIEW_COLUMNS = (
    Refund.state,
    Refund.refund_id,
    Refund.amount,
    Refund.currency,
    Refund.debit_amount,
    Refund.debit_currency,
    Refund.debit_basis,
    Refund.status_message,
    Refund.order_status,
    Refund.corrected,
    Refund.batch_id,
)


def row_view(row: Row[Any], batch_id: str) -> RefundRowView:
    disposition = Disposition(row.disposition)
    reasons: list[str] = json.loads(row.reasons) if row.reasons else []
    # A CONFLICT row's refund belongs to another row's content: show none of its figures.
    own = disposition in (Disposition.NEW, Disposition.ALREADY_KNOWN) and row.state is not None
    if not own:
        state = S.REJECTED if disposition == Disposition.REJECTED else S.CONFLICT
        return RefundRowView(
            row.row_number,
            row.external_id,
            row.order_id,
            disposition,
            state,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            False,
            None,
            reasons,
        )
    return RefundRowView(
        row_number=row.row_number,
        external_id=row.external_id,
        order_id=row.order_id,
        disposition=disposition,
        state=S(row.state),
        refund_id=row.refund_id,
        amount=row.amount,
        currency=row.currency,
        debit_amount=row.debit_amount,
        debit_currency=row.debit_currency,
        debit_basis=row.debit_basis,
        status_message=row.status_message,
        order_status=row.order_status,
        corrected=bool(row.corrected),
        first_batch_id=row.batch_id if row.batch_id != batch_id else None,
        reasons=reasons,
    )
