"""The inbox of the daily run: which files wait, and where each goes once it is settled. The
inbox is a folder or a storage URL every worker reaches (`s3://bucket/inbox`, payflow.storage).

A file leaves the inbox only after its batch is in the ledger (and its pay run exists), so a
crash at any point leaves it where the next run finds it; the batch id is the file's content
hash, so taking the same file again registers nothing new and pays nothing twice.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from payflow.storage import Entry, LocalStorage, Place, Storage, place_name

BATCH_SUFFIXES = (".csv", ".xlsx")
NOTE_SUFFIX = ".why.txt"
# Who started a daily batch's pay run, in the action log (the approvers are logged apart).
SCHEDULE_ACTOR = "schedule:daily-payouts"
# A file is taken once it has not changed for this long (seconds); the run waits at most
# QUIET_WAIT_SECONDS for the files still being written, and leaves those for the next run.
QUIET_SECONDS = 5.0
QUIET_WAIT_SECONDS = 120.0


class Settled(StrEnum):
    """Where a file of the inbox ends up."""

    PROCESSED = "processed"  # its batch is in the ledger and a pay run was started
    FAILED = "failed"  # it could not become a batch to pay; a note says why
    LEFT = "left"  # something outside the file went wrong; it stays for the next run


@dataclass(frozen=True)
class InboxOutcome:
    """What the daily run did with one file."""

    file: str
    settled: Settled
    batch_id: str | None = None
    pay_run_id: str | None = None
    reason: str | None = None
    # Set when its batch's maker is this worker's account, not a person (`file_maker_note`).
    maker_note: str | None = None
    # Its name in processed/ or failed/ when one of its name was there already (`stem-2.ext`).
    moved_to: str | None = None

    @property
    def went_to(self) -> str:
        """Where an operator finds the file: `processed`, or `processed/pay-2.csv` when it was
        renamed beside an older file of its name (which `processed/pay.csv` still is)."""
        if self.moved_to and self.moved_to != self.file:
            return f"{self.settled.value}/{self.moved_to}"
        return self.settled.value


def waiting_files(inbox: Storage) -> list[Entry]:
    """Batch files waiting in the inbox (not in its subfolders), oldest first."""
    files = [e for e in inbox.entries() if Path(e.name).suffix.lower() in BATCH_SUFFIXES]
    return sorted(files, key=lambda e: (e.modified, e.name))


def inbox_files(inbox: Path) -> list[Path]:
    """Batch files waiting in the local inbox folder, oldest first."""
    return [inbox / e.name for e in waiting_files(LocalStorage(inbox))]


def still_written(files: list[Path], quiet_seconds: float, max_wait_seconds: float) -> list[Path]:
    """Wait (up to `max_wait_seconds`) until no file changed for `quiet_seconds`; the files
    still changing then. A file taken while it was copied in was registered half-written, and
    the rows written after were never paid. (An object in remote storage appears whole, in one
    PUT: the daily run takes it at once.)"""
    started = time.time()
    before = _shapes(files)
    while True:
        now = time.time()
        shapes = _shapes(files)
        busy = [
            p
            for p, shape in shapes.items()
            if now - shape[1] < quiet_seconds or before.get(p) != shape
        ]
        before = shapes
        if not busy or now - started >= max_wait_seconds:
            return busy
        time.sleep(min(quiet_seconds, max(0.1, max_wait_seconds - (now - started))))


def _shapes(files: list[Path]) -> dict[Path, tuple[int, float]]:
    """Size and modification time of each file still there."""
    shapes = {}
    for path in files:
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        shapes[path] = (stat.st_size, stat.st_mtime)
    return shapes


def _free_name(inbox: Storage, folder: str, name: str) -> str:
    """`folder/name`, or `folder/stem-2.ext`, `-3`... when a file of that name is there."""
    stem, suffix = os.path.splitext(name)
    candidate, n = name, 1
    while inbox.exists(f"{folder}/{candidate}") or inbox.exists(
        f"{folder}/{candidate}{NOTE_SUFFIX}"
    ):
        n += 1
        candidate = f"{stem}-{n}{suffix}"
    return f"{folder}/{candidate}"


def settle(inbox: Storage, name: str, where: Settled, note: str | None = None) -> Place:
    """Move the inbox file `name` to `processed/` or `failed/` in the inbox; for a failed file
    the note goes first into `<file>.why.txt`, so a crash between the two leaves the file in the
    inbox. Where the file now is."""
    if where is Settled.LEFT:
        return inbox.place(name)
    target = _free_name(inbox, where.value, name)
    if note is not None:
        inbox.write_new_text(f"{target}{NOTE_SUFFIX}", note.rstrip() + "\n")
    inbox.move(name, target)
    return inbox.place(target)


def settle_file(path: Path, where: Settled, note: str | None = None) -> Path:
    """`settle` for a file of a local inbox folder: its new path."""
    return Path(settle(LocalStorage(path.parent), path.name, where, note))


def inbox_markdown(inbox: Path | str, outcomes: list[InboxOutcome]) -> str:
    """The daily run's summary: one line per file, with its batch, pay run or reason."""
    title = place_name(inbox) or str(inbox)
    if not outcomes:
        return f"## Inbox {title}\n\nNo new files."
    lines = [
        f"## Inbox {title}",
        "",
        "| file | went to | batch | pay run | why |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        cells = (o.file, o.went_to, o.batch_id or "", o.pay_run_id or "", o.reason or "")
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    noted = [o for o in outcomes if o.maker_note and o.batch_id]
    if noted:
        lines.append("")
    lines += [f"- {o.file}: {o.maker_note}" for o in noted]
    return "\n".join(lines)
