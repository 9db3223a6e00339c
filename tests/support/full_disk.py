"""A real full filesystem for a test (issue 36, item 4): a 16 KB tmpfs mounted and filled.

Mounting needs root (the machines that run this suite are): elsewhere the tests are skipped.
"""

from __future__ import annotations

import contextlib
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def full_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder on a filesystem with no space left (files can still be created, empty)."""
    mount = tmp_path / "full"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k", f"payflow-full-{uuid.uuid4().hex[:6]}", mount],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        # Full now (the write fails part way): what the test needs.
        with (mount / "filler").open("wb") as filler, contextlib.suppress(OSError):
            filler.write(b"\0" * (64 << 10))
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def leftovers(folder: Path) -> list[str]:
    """What a command left in the full folder (the filler aside): a partial file is a bug."""
    return sorted(p.name for p in folder.iterdir() if p.name != "filler")
