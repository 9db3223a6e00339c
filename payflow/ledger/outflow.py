"""Refund and links batches as their approval counts them: the rows an approval is bound to,
what they may still send, and whether any has gone out.

Payout batches are counted by `payflow.ledger.approvals` and `payflow.ledger.counts`. A batch is
only ever one kind, so the approval adds these figures to those: a payout batch has none here,
and its content hash and totals stay what they were. A links batch gets its `batches` row when
it is registered (`register.ensure_batch_row`), so that its terms and approvals are kept as every
other batch's.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import Connection, Engine, select

from payflow.ledger.counts import CurrencyTotal
from payflow.ledger.states import RowState
from payflow.ledger.tables import LinkPayout, Refund

REFUND, LINK = "refund", "link"  # the `payment_type` of their CurrencyTotal
# Not sent yet: a refund before its POST (or one the lookup found was never made), a link row
# before its recipient made the payout.
UNSENT_REFUNDS = frozenset({RowState.VALIDATED.value, RowState.SUBMITTING.value})
UNSENT_LINKS = frozenset({RowState.VALIDATED.value})

Row = tuple[str, str, Decimal, str, str]  # externalId, content hash, amount, currency, state


def outflow_rows(connection: Connection, batch_id: str) -> list[tuple[str, Row]]:
    """(kind, row) of every refund and link row of the batch, by externalId."""
    found: list[tuple[str, Row]] = []
    for kind, table in ((REFUND, Refund), (LINK, LinkPayout)):
        query = (
            select(table.external_id, table.content_hash, table.amount, table.currency, table.state)
            .where(table.batch_id == batch_id)
            .order_by(table.external_id)
        )
        found += [(kind, tuple(row)) for row in connection.execute(query)]
    return found


def _unsent(engine: Engine, batch_id: str, every: bool = False) -> list[tuple[str, Row]]:
    with engine.connect() as connection:
        rows = outflow_rows(connection, batch_id)
    return [
        (kind, row)
        for kind, row in rows
        if every or row[4] in (UNSENT_REFUNDS if kind == REFUND else UNSENT_LINKS)
    ]


def unsent_outflow(
    engine: Engine, batch_id: str, *, every: bool = False
) -> tuple[CurrencyTotal, ...]:
    """Rows and sums per currency of the batch's refunds and links not sent yet (`every`: in
    any state): what an approval of a refund or links batch is about (none for a payout
    batch)."""
    sums: dict[tuple[str, str], tuple[int, Decimal]] = {}
    for kind, (_, _, amount, currency, _) in _unsent(engine, batch_id, every):
        rows, total = sums.get((currency, kind), (0, Decimal(0)))
        sums[(currency, kind)] = (rows + 1, total + amount)
    return tuple(
        CurrencyTotal(currency, kind, rows, amount)
        for (currency, kind), (rows, amount) in sorted(sums.items())
    )


def outflow_above(
    engine: Engine, batch_id: str, limits: dict[str, Decimal]
) -> list[tuple[str, str, Decimal]]:
    """(externalId, currency, amount) of refunds and links not sent yet above their currency's
    per-row maximum."""
    return [
        (ext, currency, amount)
        for _, (ext, _, amount, currency, _) in _unsent(engine, batch_id)
        if currency in limits and amount > limits[currency]
    ]


def outflow_started(engine: Engine, batch_id: str) -> int:
    """Refunds sent and link payouts made by the batch: beyond a decline."""
    with engine.connect() as connection:
        rows = outflow_rows(connection, batch_id)
    unsent = {REFUND: UNSENT_REFUNDS, LINK: UNSENT_LINKS}
    return sum(1 for kind, row in rows if row[4] not in unsent[kind])
