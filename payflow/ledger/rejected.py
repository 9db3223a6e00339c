"""A batch's rows rejected in its file, with the problems intake found: what `payflow status`
lists, so a REJECTED count comes with its rows and reasons."""

from __future__ import annotations

import json
from typing import NamedTuple

from sqlalchemy import Engine, func, select

from payflow.ledger.records import Disposition
from payflow.ledger.tables import BatchRow


class RejectedLine(NamedTuple):
    """One source row rejected in the file: never registered as a payout, never sent."""

    row_number: int
    external_id: str | None
    reasons: tuple[str, ...]


def rejected_rows(
    engine: Engine, batch_id: str, limit: int, disposition: Disposition = Disposition.REJECTED
) -> tuple[int, list[RejectedLine]]:
    """How many rows of the batch were rejected (or, with `disposition` CONFLICT, refused as a
    known externalId with other content, its reason naming the externalId's batch and the
    columns that differ), and the first `limit` of them in row order."""
    rejected = (BatchRow.batch_id == batch_id) & (BatchRow.disposition == disposition.value)
    with engine.connect() as conn:
        total = int(conn.execute(select(func.count()).where(rejected)).scalar_one())
        found = conn.execute(
            select(BatchRow.row_number, BatchRow.external_id, BatchRow.reasons)
            .where(rejected)
            .order_by(BatchRow.row_number)
            .limit(limit)
        ).all()
    return total, [
        RejectedLine(row, ext, tuple(str(r) for r in json.loads(reasons or "[]")))
        for row, ext, reasons in found
    ]
