"""Recording many created payouts in one transaction (the submit engine's hot path).

`moves.mark_created` commits once per row; at hundreds of payouts per second that commit, not
the network, is the bound. Here one transaction loads the rows in one locked query (ordered by
externalId, so two workers lock in the same order), applies the same checks as `mark_created`
row by row, and writes every move. A row that fails a check is reported, never half-written,
and does not stop the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Row, update

from payflow.ledger.moves import PlannedMove, load_in_order, plan_move, write_moves
from payflow.ledger.records import LeaseLost, LedgerError, UnknownPayout
from payflow.ledger.states import (
    EventSource,
    IllegalTransition,
    Move,
    RowState,
    check_move,
    parse_api_status,
)
from payflow.ledger.tables import Payout

# Keeps the IN (...) list of one query well under every backend's bound-parameter limit.
SELECT_PAGE = 500


@dataclass(frozen=True, slots=True)
class CreatedPayout:
    """A payout the service holds for a row: created by our POST, or found by a lookup."""

    external_id: str
    payout_id: str
    status: str
    status_message: str | None = None
    source: EventSource = EventSource.SUBMIT


@dataclass(frozen=True, slots=True)
class BulkOutcome:
    """What `mark_created_many` did: rows moved, rows already there, and per-row refusals."""

    moved: int
    unchanged: int
    errors: dict[str, LedgerError | IllegalTransition]


def mark_created_many(
    engine: Engine, created: Sequence[CreatedPayout], now: datetime
) -> BulkOutcome:
    """`mark_created` for every item in one transaction; per-row errors are returned, not raised.

    Errors are those `mark_created` raises: UnknownPayout, LeaseLost (the row was released for
    retry), LedgerError (another payout id is stored for the externalId), IllegalTransition."""
    moved = unchanged = 0
    errors: dict[str, LedgerError | IllegalTransition] = {}
    with engine.begin() as connection:
        rows = _load_for_update(connection, sorted({item.external_id for item in created}))
        written: set[str] = set()
        pending: list[PlannedMove] = []
        for item in created:
            if item.external_id in written:
                # A second item for one externalId must see the row as the first one left it.
                write_moves(connection, pending)
                pending = []
                rows.update(_load_for_update(connection, [item.external_id]))
            row = rows.get(item.external_id)
            try:
                if row is None:
                    raise UnknownPayout(f"no payout for externalId={item.external_id!r}")
                planned = _plan_one(connection, row, item, now)
            except (LedgerError, IllegalTransition) as exc:
                errors[item.external_id] = exc
                continue
            written.add(item.external_id)
            if planned is not None:
                pending.append(planned)
            moved += int(planned is not None)
            unchanged += int(planned is None)
        write_moves(connection, pending)
    return BulkOutcome(moved=moved, unchanged=unchanged, errors=errors)


def _load_for_update(connection: Connection, external_ids: Sequence[str]) -> dict[str, Row[Any]]:
    found: dict[str, Row[Any]] = {}
    for start in range(0, len(external_ids), SELECT_PAGE):
        page = external_ids[start : start + SELECT_PAGE]
        rows = load_in_order(connection, Payout.external_id.in_(page))
        found.update((row.external_id, row) for row in rows)
    return found


def _plan_one(
    connection: Connection, row: Row[Any], item: CreatedPayout, now: datetime
) -> PlannedMove | None:
    # The same decisions as moves.mark_created, in the same order.
    state = parse_api_status(item.status)
    message = item.status_message
    if state is None:
        message = f"unrecognised status {item.status!r}" + (f": {message}" if message else "")
        state = RowState.CREATED
    if row.payout_id not in (None, item.payout_id):
        raise LedgerError(
            f"externalId {item.external_id!r} has payout {row.payout_id}, not {item.payout_id}"
        )
    current = RowState(row.state)
    if current == RowState.VALIDATED:
        raise LeaseLost(
            f"{item.external_id!r} was released for retry, yet payout {item.payout_id} exists"
        )
    if check_move(item.external_id, current, state) is Move.STALE:
        if row.payout_id is None:
            connection.execute(
                update(Payout)
                .where(Payout.id == row.id)
                .values(payout_id=item.payout_id, updated_at=now)
            )
        return None
    return plan_move(
        row, state, source=item.source, message=message, now=now, payout_id=item.payout_id
    )
