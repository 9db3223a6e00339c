"""Start several `ledger_worker.py` processes, release them at once, collect their answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("ledger_worker.py")
REPO = Path(__file__).resolve().parents[2]


def run_workers(tmp_path: Path, argvs: list[list[str]], timeout: float = 60) -> list[Any]:
    """Run one worker per argv (mode, url, *rest); all start work together; fail on any error."""
    go_file = tmp_path / f"go-{os.getpid()}-{len(list(tmp_path.iterdir()))}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), argv[0], argv[1], str(go_file), *argv[2:]],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        for argv in argvs
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line == "ready", proc.stderr.read() if proc.stderr else line
        go_file.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
