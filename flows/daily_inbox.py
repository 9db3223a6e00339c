"""The daily run: every batch file dropped into the inbox folder goes through payout-batch."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows.payout_batch import payout_batch
from payflow.run_results import PayResult

BATCH_SUFFIXES = (".csv", ".xlsx")


def inbox_files(inbox: Path) -> list[Path]:
    """Batch files waiting in the inbox, oldest first; `processed/` holds the ones done."""
    files = [p for p in inbox.iterdir() if p.is_file() and p.suffix.lower() in BATCH_SUFFIXES]
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name))


@flow(name="daily-inbox", persist_result=False)
def daily_inbox(inbox: str) -> list[PayResult]:
    """Run payout-batch on each inbox file, then move it to `processed/`.

    Each batch pauses for approval when the approval policy asks for it; a re-run of a file already
    paid pays nothing again (the ledger is keyed by externalId).
    """
    folder = Path(inbox)
    done = folder / "processed"
    done.mkdir(parents=True, exist_ok=True)
    results = []
    for path in inbox_files(folder):
        results.append(payout_batch(path=str(path)))
        path.rename(done / path.name)
    return results
