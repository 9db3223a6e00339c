"""Every hostile file ends `payflow validate` in exit 1 or 2, with one clear line (or a rejects
report), no traceback, within a generous bound of time and memory (issue 7, item 6).

The bounds are not speed targets: they catch a reader that grows with the hostile input
(minutes, gigabytes) instead of stopping at a limit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile_files import HOSTILE
from openpyxl import load_workbook

BOUND_SECONDS = 30 * 4  # generous: 30 s on an idle machine, this one is shared by many helpers
BOUND_RSS_BYTES = 1024**3


@dataclass
class Ended:
    code: int
    out: str
    err: str
    seconds: float
    peak_rss: int


def run_validate(path: Path, home: Path, **extra: str) -> Ended:
    """`payflow validate PATH` in a child process, with the child's own peak RSS (wait4)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env.update(PAYFLOW_HOME=str(home), **extra)
    out_path, err_path = home / "stdout.txt", home / "stderr.txt"
    home.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        child = subprocess.Popen(
            [sys.executable, "-m", "payflow", "validate", str(path), "--out", str(home / "out")],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=home,
        )
        killer = threading.Timer(BOUND_SECONDS * 2, os.kill, (child.pid, signal.SIGKILL))
        killer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            killer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
    return Ended(
        child.returncode,
        out_path.read_text("utf-8", errors="replace"),
        err_path.read_text("utf-8", errors="replace"),
        time.monotonic() - started,
        usage.ru_maxrss * 1024,  # kilobytes on Linux
    )


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_ends_in_one_clear_line_within_bounds(tmp_path: Path, case: str) -> None:
    writer, expected_code, words = HOSTILE[case]
    path = writer(tmp_path / case)
    ended = run_validate(path, tmp_path / "home")
    assert ended.code == expected_code, (ended.out, ended.err)
    assert "Traceback" not in ended.out + ended.err
    assert "unexpected error" not in ended.err
    assert ended.seconds < BOUND_SECONDS
    assert ended.peak_rss < BOUND_RSS_BYTES
    if expected_code == 2:
        lines = ended.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("payflow: ") and words in lines[0], lines
        assert ended.out == ""
        return
    first = ended.out.splitlines()[0]
    assert "rejected" in first and words in ended.out
    (report,) = (tmp_path / "home" / "out").glob("*-rejects.xlsx")
    sheet = load_workbook(report).active  # written, and readable, despite control characters
    assert sheet is not None and sheet.max_row > 1


def test_row_limit_is_a_setting_applied_while_reading(tmp_path: Path) -> None:
    path = HOSTILE["name_1000.csv"][0](tmp_path / "b.csv")
    ended = run_validate(path, tmp_path / "home", PAYFLOW_MAX_ROWS="2")
    assert ended.code == 2 and "more than 2 data rows (PAYFLOW_MAX_ROWS)" in ended.err
