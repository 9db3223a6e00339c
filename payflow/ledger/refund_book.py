"""Refund rows in the ledger: register, claim, record outcomes and statuses, read for reports.

The same discipline as payouts, on the `refunds` table: a row is SUBMITTING (leased to one
worker) before its POST; every status goes through `states.check_move(..., REFUNDS)` so it only
moves forward; a change of a final status is a correction, flagged and kept in `refund_events`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, Row, func, insert, or_, select, update

from payflow.ledger.records import ConflictRow, Disposition, KnownRow, LeaseLost, LedgerError
from payflow.ledger.refund_records import (
    ClaimedRefund,
    CreatedRefund,
    RefundRef,
    RefundRegisterOutcome,
    RefundRowView,
    RejectedRefund,
)
from payflow.ledger.refund_rows import (
    VIEW_COLUMNS,
    apply_move,
    event_values,
    load_for_update,
    refund_values,
    row_view,
    source_row,
    was_ever,
    write_values,
)
from payflow.ledger.register import ensure_batch_row
from payflow.ledger.states import (
    REFUNDS,
    EventSource,
    IllegalTransition,
    Move,
    RowState,
    check_move,
    parse_api_status,
)
from payflow.ledger.tables import Batch, Refund, RefundEvent, RefundRow
from payflow.model import RefundInstruction

Clock = Callable[[], datetime]
S = RowState
OPEN_STATES = frozenset({S.VALIDATED, S.SUBMITTING, S.PENDING, S.MANUAL})
# An order with a refund in one of these states must not be refunded again by another row.
BLOCKING_STATES = OPEN_STATES | {S.COMPLETED}
_INSTRUCTION = (
    Refund.row_number,
    Refund.external_id,
    Refund.order_id,
    Refund.amount,
    Refund.currency,
    Refund.amount_given,
    Refund.reason,
    Refund.callback_url,
)


class RefundBook:
    """The refunds part of the ledger; reached as `Ledger.refunds`."""

    def __init__(self, engine: Engine, clock: Clock) -> None:
        self._engine = engine
        self._clock = clock

    # -- registering -------------------------------------------------------------------------

    def register_batch(
        self,
        batch_id: str,
        source_name: str,
        valid: Sequence[RefundInstruction],
        rejected: Sequence[RejectedRefund],
        *,
        sheet: str | None = None,
    ) -> RefundRegisterOutcome:
        """Record every row once: NEW refunds, ALREADY_KNOWN (same order and amount under the
        same externalId), CONFLICT (other content under a known externalId) or REJECTED; and
        the XLSX `sheet` read, as a payout batch records its own."""
        now = self._clock()
        with self._engine.begin() as connection:
            ensure_batch_row(
                connection, batch_id, source_name, len(valid), len(rejected), now, sheet
            )
            done = connection.scalar(
                select(RefundRow.id).where(RefundRow.batch_id == batch_id).limit(1)
            )
            if done is not None:
                count = len(valid) + len(rejected)
                return RefundRegisterOutcome(batch_id, already_registered=count)
            known = _known(connection, [v.external_id for v in valid])
            rows: list[dict[str, Any]] = []
            new_refunds: list[dict[str, Any]] = []
            already: list[KnownRow] = []
            conflicts: list[ConflictRow] = []
            for item in valid:
                found = known.get(item.external_id)
                disposition = Disposition.NEW
                reasons = None
                if found is None:
                    new_refunds.append(refund_values(item, batch_id, now))
                elif found.content_hash == item.content_hash():
                    disposition = Disposition.ALREADY_KNOWN
                    already.append(
                        KnownRow(item.row_number, item.external_id, S(found.state), found.batch_id)
                    )
                else:
                    disposition = Disposition.CONFLICT
                    reason = "externalId already used for another order or amount"
                    reasons = json.dumps([reason])
                    conflicts.append(ConflictRow(item.row_number, item.external_id, reason))
                rows.append(
                    source_row(
                        batch_id,
                        item.row_number,
                        item.external_id,
                        item.order_id,
                        disposition,
                        reasons,
                    )
                )
            for reject in rejected:
                rows.append(
                    source_row(
                        batch_id,
                        reject.row_number,
                        reject.external_id,
                        reject.order_id,
                        Disposition.REJECTED,
                        json.dumps(reject.reasons),
                    )
                )
            if new_refunds:
                connection.execute(insert(Refund), new_refunds)
                connection.execute(
                    insert(RefundEvent),
                    [
                        event_values(
                            r["external_id"], None, S.VALIDATED, EventSource.SUBMIT, now, None
                        )
                        for r in new_refunds
                    ],
                )
            if rows:
                connection.execute(insert(RefundRow), rows)
        return RefundRegisterOutcome(
            batch_id, len(new_refunds), len(rejected), 0, already, conflicts
        )

    def known(self, external_ids: Iterable[str]) -> dict[str, RefundInstruction]:
        """externalId -> what the ledger already holds under it, among these ids."""
        with self._engine.connect() as connection:
            return {
                ext: RefundInstruction(
                    row.row_number, ext, row.order_id, row.amount, row.currency, row.amount_given
                )
                for ext, row in _known(connection, external_ids).items()
            }

    def blocking_refunds(self, order_ids: Iterable[str]) -> dict[str, str]:
        """order id -> externalId of a refund of that order that is open or COMPLETED."""
        ids = list(set(order_ids))
        found: dict[str, str] = {}
        with self._engine.connect() as connection:
            for start in range(0, len(ids), 500):
                query = select(Refund.order_id, Refund.external_id).where(
                    Refund.order_id.in_(ids[start : start + 500]),
                    Refund.state.in_([s.value for s in BLOCKING_STATES]),
                )
                found.update({row.order_id: row.external_id for row in connection.execute(query)})
        return found

    def failed_refunds(self, order_ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """order id -> (externalId, state, batch id) of a refund of it that ended FAILED or
        CANCELED: refunding the order again is a retry an operator must ask for."""
        ids = list(set(order_ids))
        found: dict[str, tuple[str, str, str]] = {}
        with self._engine.connect() as connection:
            for start in range(0, len(ids), 500):
                query = select(
                    Refund.order_id, Refund.external_id, Refund.state, Refund.batch_id
                ).where(
                    Refund.order_id.in_(ids[start : start + 500]),
                    Refund.state.in_([S.FAILED.value, S.CANCELED.value]),
                )
                for row in connection.execute(query):
                    found[row.order_id] = (row.external_id, row.state, row.batch_id)
        return found

    # -- claiming ----------------------------------------------------------------------------

    def claim(
        self, batch_id: str, worker_id: str, limit: int, lease_seconds: float = 300.0
    ) -> list[ClaimedRefund]:
        """Lease rows: SUBMITTING rows whose lease expired first (needs_resolution), and only
        when there are none, VALIDATED rows, which become SUBMITTING here (before any POST)."""
        now = self._clock()
        until = now + timedelta(seconds=lease_seconds)
        with self._engine.begin() as connection:
            expired = Refund.state == S.SUBMITTING.value
            expired = expired & or_(Refund.lease_until.is_(None), Refund.lease_until <= now)
            rows = _lock(connection, batch_id, expired, limit)
            needs_resolution = bool(rows)
            if not rows:
                rows = _lock(connection, batch_id, Refund.state == S.VALIDATED.value, limit)
            if not rows:
                return []
            ids = [row.id for row in rows]
            values: dict[str, Any] = {
                "state": S.SUBMITTING.value,
                "claimed_by": worker_id,
                "lease_until": until,
                "updated_at": now,
            }
            if not needs_resolution:
                values["attempts"] = Refund.attempts + 1
            connection.execute(update(Refund).where(Refund.id.in_(ids)).values(**values))
            from_state = S.SUBMITTING if needs_resolution else S.VALIDATED
            source = EventSource.RESOLVE if needs_resolution else EventSource.SUBMIT
            connection.execute(
                insert(RefundEvent),
                [
                    event_values(r.external_id, from_state, S.SUBMITTING, source, now, None)
                    for r in rows
                ],
            )
        return [
            ClaimedRefund(
                RefundInstruction(*(getattr(row, c.key) for c in _INSTRUCTION)),
                row.attempts + (0 if needs_resolution else 1),
                until,
                needs_resolution,
            )
            for row in rows
        ]

    def release_stale_leases(self, batch_id: str, worker_id: str | None = None) -> int:
        """Expire the leases of the batch's SUBMITTING rows (one worker's, or all), so the next
        claim resolves them by lookup before anything is sent."""
        now = self._clock()
        conditions = [_in_batch(batch_id), Refund.state == S.SUBMITTING.value]
        if worker_id is not None:
            conditions.append(Refund.claimed_by == worker_id)
        with self._engine.begin() as connection:
            result = connection.execute(
                update(Refund).where(*conditions).values(lease_until=now, updated_at=now)
            )
            return int(result.rowcount)

    def lease_holders(self, batch_id: str) -> set[str]:
        """Worker ids holding SUBMITTING refunds of the batch (to find a dead worker's leases)."""
        query = select(Refund.claimed_by).where(
            _in_batch(batch_id), Refund.state == S.SUBMITTING.value, Refund.claimed_by.is_not(None)
        )
        with self._engine.connect() as connection:
            return {str(holder) for holder in connection.scalars(query.distinct())}

    # -- outcomes and statuses ---------------------------------------------------------------

    def mark_created(
        self, external_id: str, created: CreatedRefund, *, source: EventSource
    ) -> bool:
        """Record the refund the service created or a lookup found (SUBMITTING -> its status).
        Recorded even after the lease passed on, since the refund exists."""
        state = parse_api_status(created.status, REFUNDS)
        with self._engine.begin() as connection:
            row = load_for_update(connection, external_id=external_id)
            if row.refund_id not in (None, created.refund_id):
                raise LedgerError(f"refund {external_id!r} already has another refund id")
            if S(row.state) == S.VALIDATED:
                raise LeaseLost(f"{external_id!r} was released for retry before its refund came")
            values: dict[str, Any] = {
                "refund_id": created.refund_id,
                "debit_amount": created.debit_amount,
                "debit_currency": created.debit_currency,
                "debit_basis": created.debit_basis,
            }
            if state is None:
                values["status_message"] = f"unrecognised status {created.status[:40]!r}"
                write_values(connection, row, S(row.state), self._clock(), values)
                return False
            return apply_move(
                connection, row, state, source, self._clock(), values, created.status_message
            )

    def mark_outcome(
        self, external_id: str, new: RowState, message: str | None, *, worker_id: str | None
    ) -> bool:
        """SUBMITTING -> SUBMIT_REJECTED (the service refused), CONFLICT (other content found)
        or VALIDATED (a lookup said 404: sending again is safe)."""
        source = EventSource.SUBMIT if new == S.SUBMIT_REJECTED else EventSource.RESOLVE
        with self._engine.begin() as connection:
            row = load_for_update(connection, external_id=external_id)
            if check_move(external_id, S(row.state), new, REFUNDS) is Move.STALE:
                return False
            if worker_id is not None and row.claimed_by != worker_id:
                raise LeaseLost(f"{external_id!r} is leased to {row.claimed_by}, not {worker_id}")
            return apply_move(connection, row, new, source, self._clock(), {}, message)

    def record_status(
        self,
        *,
        external_id: str | None = None,
        refund_id: str | None = None,
        status: str,
        source: EventSource,
        status_message: str | None = None,
        debit_amount: Decimal | None = None,
        debit_currency: str | None = None,
        debit_basis: str | None = None,
    ) -> bool:
        """A status from a webhook or a poll, forward only: True when the row moved. A status
        before mark_created (webhook first) is applied and the refund id recorded."""
        now = self._clock()
        with self._engine.begin() as connection:
            row = load_for_update(connection, external_id=external_id, refund_id=refund_id)
            state = parse_api_status(status, REFUNDS)
            values: dict[str, Any] = {"last_status_at": now}
            if refund_id is not None and row.refund_id is None:
                values["refund_id"] = refund_id
            for key, value in (
                ("debit_amount", debit_amount),
                ("debit_currency", debit_currency),
                ("debit_basis", debit_basis),
            ):
                if value is not None:
                    values[key] = value
            if state is None:
                values["status_message"] = f"unrecognised status {status[:40]!r}"
                write_values(connection, row, S(row.state), now, values)
                return False
            try:
                return apply_move(connection, row, state, source, now, values, status_message)
            except IllegalTransition:
                if was_ever(connection, row.external_id, state):
                    return False  # a redelivery of a status passed before a correction
                raise

    def record_order_status(self, order_id: str, status: str, *, source: EventSource) -> int:
        """The order of our refunds moved (e.g. to REFUND): recorded on each; returns how many
        rows changed (0 when the status was already known or the order is not ours)."""
        now = self._clock()
        value = status.strip().upper()[:24]
        with self._engine.begin() as connection:
            rows = connection.execute(
                select(Refund.id, Refund.external_id, Refund.state, Refund.order_status)
                .where(Refund.order_id == order_id, Refund.refund_id.is_not(None))
                .with_for_update()
            ).all()
            changed = [row for row in rows if row.order_status != value]
            if not changed:
                return 0
            connection.execute(
                update(Refund)
                .where(Refund.id.in_([row.id for row in changed]))
                .values(order_status=value, updated_at=now)
            )
            connection.execute(
                insert(RefundEvent),
                [
                    event_values(
                        row.external_id,
                        S(row.state),
                        S(row.state),
                        source,
                        now,
                        f"order status {value}",
                    )
                    for row in changed
                ],
            )
            return len(changed)

    # -- reading -----------------------------------------------------------------------------

    def unfinished(self, batch_id: str) -> list[RefundRef]:
        """Refunds of the batch not final yet (VALIDATED, SUBMITTING, PENDING, MANUAL)."""
        return self._refs(batch_id, Refund.state.in_([s.value for s in OPEN_STATES]))

    def awaiting_order_status(self, batch_id: str) -> list[RefundRef]:
        """COMPLETED refunds whose order has not been seen in REFUND yet."""
        condition = (Refund.state == S.COMPLETED.value) & or_(
            Refund.order_status.is_(None), Refund.order_status != "REFUND"
        )
        return self._refs(batch_id, condition)

    def _refs(self, batch_id: str, condition: Any) -> list[RefundRef]:
        query = select(
            Refund.external_id, Refund.refund_id, Refund.order_id, Refund.state, Refund.order_status
        ).where(_in_batch(batch_id), condition)
        with self._engine.connect() as connection:
            return [
                RefundRef(r.external_id, r.refund_id, r.order_id, S(r.state), r.order_status)
                for r in connection.execute(query.order_by(Refund.id))
            ]

    def last_change(self, batch_id: str) -> datetime | None:
        """When a refund of the batch last changed in the ledger, or the batch was registered
        (None: no such batch); `payflow status` asks the service when this is old."""
        changed = select(func.max(Refund.updated_at)).where(_in_batch(batch_id))
        registered = select(Batch.created_at).where(Batch.batch_id == batch_id)
        with self._engine.connect() as connection:
            moments = [connection.scalar(changed), connection.scalar(registered)]
        found = [moment for moment in moments if moment is not None]
        return max(found) if found else None

    def summary(self, batch_id: str) -> dict[str, int]:
        """Source rows of the batch per state (REJECTED and CONFLICT rows count as such)."""
        return dict(Counter(view.state.value for view in self.rows(batch_id)))

    def rows(self, batch_id: str) -> Iterator[RefundRowView]:
        """Every source row of the refund batch in order, with its refund's current state."""
        query = (
            select(
                RefundRow.row_number,
                RefundRow.external_id,
                RefundRow.order_id,
                RefundRow.disposition,
                RefundRow.reasons,
                *VIEW_COLUMNS,
            )
            .outerjoin(Refund, Refund.external_id == RefundRow.external_id)
            .where(RefundRow.batch_id == batch_id)
            .order_by(RefundRow.row_number)
        )
        with self._engine.connect() as connection:
            result = connection.execute(query).all()
        for row in result:
            yield row_view(row, batch_id)

    def batch_exists(self, batch_id: str) -> bool:
        """True when the refund batch was registered."""
        with self._engine.connect() as connection:
            query = select(RefundRow.id).where(RefundRow.batch_id == batch_id).limit(1)
            return connection.scalar(query) is not None

    def events(self, external_id: str) -> list[tuple[str | None, str, str, str | None]]:
        """(from, to, source, message) of every recorded change of one refund, oldest first."""
        query = (
            select(
                RefundEvent.from_state,
                RefundEvent.to_state,
                RefundEvent.source,
                RefundEvent.status_message,
            )
            .where(RefundEvent.external_id == external_id)
            .order_by(RefundEvent.id)
        )
        with self._engine.connect() as connection:
            return [tuple(row) for row in connection.execute(query)]


def _in_batch(batch_id: str) -> Any:
    """Refunds a batch is responsible for: its own, and ALREADY_KNOWN ones nobody sent yet."""
    listed = select(RefundRow.external_id).where(
        RefundRow.batch_id == batch_id,
        RefundRow.disposition.in_([Disposition.NEW.value, Disposition.ALREADY_KNOWN.value]),
    )
    return or_(Refund.batch_id == batch_id, Refund.external_id.in_(listed))


def _lock(connection: Connection, batch_id: str, condition: Any, limit: int) -> list[Row[Any]]:
    query = (
        select(*_INSTRUCTION, Refund.id, Refund.attempts)
        .where(_in_batch(batch_id), condition)
        .order_by(Refund.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(connection.execute(query))


def _known(connection: Connection, external_ids: Iterable[str]) -> dict[str, Row[Any]]:
    ids = list(set(external_ids))
    found: dict[str, Row[Any]] = {}
    for start in range(0, len(ids), 500):
        query = select(*_INSTRUCTION, Refund.content_hash, Refund.state, Refund.batch_id).where(
            Refund.external_id.in_(ids[start : start + 500])
        )
        found.update({row.external_id: row for row in connection.execute(query)})
    return found
