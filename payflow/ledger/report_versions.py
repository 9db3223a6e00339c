"""The reconciliation reports written for a batch, one row per version kept (migration 0019):
where its files are, who made it, when, and what changed since the version before."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, insert, select

from payflow.ledger.tables import ReportVersion


@dataclass(frozen=True, slots=True)
class ReportVersionView:
    """One kept version of a batch's reconciliation report."""

    id: int
    batch_id: str
    csv_path: str
    xlsx_path: str
    made_by: str
    made_at: datetime
    changes: str
    digest: str
    figures: str


def record_version(engine: Engine, version: ReportVersionView) -> int:
    """Store a version (its `id` is ignored); returns the new id."""
    values = {
        "batch_id": version.batch_id,
        "csv_path": version.csv_path,
        "xlsx_path": version.xlsx_path,
        "made_by": version.made_by,
        "made_at": version.made_at,
        "changes": version.changes,
        "digest": version.digest,
        "figures": version.figures,
    }
    with engine.begin() as connection:
        inserted = connection.execute(insert(ReportVersion).values(values))
        key = inserted.inserted_primary_key
        assert key is not None
        return int(key[0])


def versions(engine: Engine, batch_id: str) -> list[ReportVersionView]:
    """The batch's report versions, newest first."""
    query = (
        select(*ReportVersion.__table__.c)
        .where(ReportVersion.batch_id == batch_id)
        .order_by(ReportVersion.id.desc())
    )
    with engine.connect() as connection:
        return [ReportVersionView(**row._mapping) for row in connection.execute(query)]
