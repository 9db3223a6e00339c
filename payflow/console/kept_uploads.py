"""Workbooks kept while their maker chooses a sheet, so the choice finishes the upload.

A workbook with payouts on two sheets (or none visible) is refused with a Sheet choice; the
maker then had to choose the file again as well. Its bytes are kept instead: in a folder of
the console's home readable by its owner only, under a random name that only the session
holding it knows, never served back, read once (deleted as it is read), deleted when another
file replaces it or its session signs out, and deleted once `KEEP_SECONDS` old (by a timer, and
by any console process's next keep, take or start, so one that stopped leaves none behind).
All kept files together stay under `MAX_KEPT_BYTES`; past it a file is not kept and the maker
chooses it again, as before.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from payflow.file_access import FileAccess, create_file, make_folder

KEEP_SECONDS = 900.0  # choosing a sheet takes a minute; a forgotten choice is gone in 15
MAX_KEPT_BYTES = 200 * 1024 * 1024
OWNER_ONLY = FileAccess()


@dataclass(frozen=True)
class KeptUpload:
    """A kept workbook as its session knows it: the random name of its file (also the form's
    proof that it offers this file's sheets), the operator's file name and its sheets."""

    token: str
    filename: str
    sheets: tuple[str, ...]


class KeptUploads:
    """The console's kept workbooks in `folder`; `clock` is wall time (files' mtimes)."""

    def __init__(
        self,
        folder: Path,
        *,
        keep_seconds: float = KEEP_SECONDS,
        max_bytes: int = MAX_KEPT_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.folder = folder
        self.keep_seconds = keep_seconds
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        # The console's own, whatever PAYFLOW_SHARED_GROUP says: nobody else reads them.
        make_folder(folder, OWNER_ONLY)
        os.chmod(folder, OWNER_ONLY.folder_mode)  # whatever an older folder had
        self.sweep()  # a console that stopped left its files behind

    def keep(self, filename: str, data: bytes, sheets: Sequence[str]) -> KeptUpload | None:
        """Keep `data` for a sheet choice; None (nothing kept) when the cap would be passed."""
        with self._lock:
            self._sweep()
            if self._total_bytes() + len(data) > self.max_bytes:
                return None
            token = secrets.token_urlsafe(24)
            # O_EXCL with the mode given at creation: never readable by others, not for a moment.
            descriptor = create_file(self.folder / token, OWNER_ONLY)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
        timer = threading.Timer(self.keep_seconds + 1, self.sweep)
        timer.daemon = True  # a console stopping does not wait for it; its next start sweeps
        timer.start()
        return KeptUpload(token, filename, tuple(sheets))

    def take(self, kept: KeptUpload) -> bytes | None:
        """The kept bytes, once (the file is deleted as it is read); None when expired."""
        with self._lock:
            self._sweep()
            path = self.folder / kept.token
            try:
                return path.read_bytes()
            except FileNotFoundError:
                return None
            finally:
                path.unlink(missing_ok=True)

    def drop(self, kept: KeptUpload | None) -> None:
        """Delete a kept file no longer wanted (replaced, or its session signed out)."""
        if kept is not None:
            (self.folder / kept.token).unlink(missing_ok=True)

    def sweep(self) -> None:
        """Delete every kept file older than `keep_seconds`, this process's or another's."""
        with self._lock:
            self._sweep()

    def _sweep(self) -> None:
        oldest = self._clock() - self.keep_seconds
        for path in self.folder.iterdir():
            try:
                if path.stat().st_mtime < oldest:
                    path.unlink(missing_ok=True)
            except FileNotFoundError:  # another console process took or swept it
                continue

    def _total_bytes(self) -> int:
        total = 0
        for path in self.folder.iterdir():
            try:
                total += path.stat().st_size
            except FileNotFoundError:
                continue
        return total
