"""Reports are kept (design invariant 9): each reconciliation report that says something new is
also written as `<batch>-reconciliation-<UTC time>.{csv,xlsx}` beside the latest under the
stable name, and recorded in the ledger with who made it, when and what changed since the last.

A report that says what the last kept version said (a download of the same figures) refreshes
the latest files only: no version piles up per download.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from payflow.ledger import Ledger
from payflow.ledger.report_versions import ReportVersionView
from payflow.reporting.summary import Summary
from payflow.storage import Storage

FIRST_VERSION = "first version"
SAME_FIGURES = "same figures; rows or findings changed (see the rows and findings sheets)"


def figures_of(summary: Summary) -> dict[str, str]:
    """The report's figures a reader compares between versions: rows per currency and
    outcome, amounts paid, and findings open and acknowledged."""
    figures: dict[str, str] = {}
    for c in summary.currencies:
        for outcome, rows in sorted(c.rows.items()):
            figures[f"{c.currency} {outcome.value}"] = str(rows)
        figures[f"{c.currency} paid amount"] = str(c.paid_amount)
    figures["open findings"] = str(len(summary.open_findings()))
    acknowledged = len(summary.unresolved_findings()) - len(summary.open_findings())
    figures["acknowledged findings"] = str(acknowledged)
    return figures


def changes_between(before: dict[str, str] | None, after: dict[str, str]) -> str:
    """What changed from the figures of the version before, in words."""
    if before is None:
        return FIRST_VERSION
    changed = [
        f"{name} {before.get(name, '0')} -> {after.get(name, '0')}"
        for name in sorted(set(before) | set(after))
        if before.get(name, "0") != after.get(name, "0")
    ]
    return "; ".join(changed) or SAME_FIGURES


def report_digest(csv_path: Path, summary: Summary) -> str:
    """What the report says: its rows (the CSV) and its findings with their acknowledgements."""
    digest = hashlib.sha256()
    with csv_path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    findings = [(f.id, f.state, f.detail, f.acknowledgement) for f in summary.findings]
    digest.update(json.dumps(findings, default=str).encode())
    return digest.hexdigest()


def _stamp(at: datetime) -> str:
    return at.strftime("%Y%m%dT%H%M%SZ")


def _free_stem(storage: Storage, stem: str) -> str:
    """`stem`, or `stem-2`, `-3`... when a version of that second already exists."""
    candidate, n = stem, 1
    while storage.exists(f"{candidate}.csv") or storage.exists(f"{candidate}.xlsx"):
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def keep_version(
    ledger: Ledger,
    batch_id: str,
    storage: Storage,
    latest: tuple[str, str],
    digest: str,
    summary: Summary,
    made_by: str,
) -> ReportVersionView | None:
    """Copy the latest (csv, xlsx) names of `storage` to versioned names and record the
    version, unless the last kept version had the same `digest` (`report_digest`); the version
    kept, or None."""
    kept = ledger.report_versions(batch_id)
    if kept and kept[0].digest == digest:
        return None
    now = ledger.now()
    stem = _free_stem(storage, f"{batch_id}-reconciliation-{_stamp(now)}")
    copies = (f"{stem}.csv", f"{stem}.xlsx")
    for source, target in zip(latest, copies, strict=True):
        storage.copy(source, target)
    figures = figures_of(summary)
    before = json.loads(kept[0].figures) if kept else None
    version = ReportVersionView(
        id=0,
        batch_id=batch_id,
        csv_path=str(storage.place(copies[0])),
        xlsx_path=str(storage.place(copies[1])),
        made_by=made_by,
        made_at=now,
        changes=changes_between(before, figures),
        digest=digest,
        figures=json.dumps(figures, sort_keys=True),
    )
    return replace(version, id=ledger.record_report_version(version))
