"""A `payflow` server process (webhooks, links serve) for a test: started with its options,
waited for until it says it listens, stopped with SIGTERM; its stderr kept to read."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def serving(
    args: list[str], env: dict[str, str], cwd: Path, ready: str, *, timeout: float = 120
) -> Iterator[Path]:
    """Run `payflow ARGS` until the block ends; yields the file its stderr goes to, once a
    line of it holds `ready`. Nothing of it may be a traceback."""
    err = cwd / f"server-{time.monotonic_ns()}.err"
    with err.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "payflow", *args],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while ready not in err.read_text(encoding="utf-8"):
            assert process.poll() is None, err.read_text(encoding="utf-8")
            assert time.monotonic() < deadline, f"no {ready!r} in {err.read_text('utf-8')}"
            time.sleep(0.1)
        yield err
    finally:
        process.terminate()
        process.wait(timeout=60)
    assert "Traceback" not in err.read_text(encoding="utf-8")
