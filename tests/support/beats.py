"""Pay run heartbeats as tests write them: from the past, from a gone process, from elsewhere."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import timedelta

from payflow.ledger import Ledger, utc_now


def at_past(ledger: Ledger, seconds: float) -> Ledger:
    """The same ledger with its clock `seconds` back: what a process wrote that long ago."""
    return Ledger(ledger.engine, clock=lambda: utc_now() - timedelta(seconds=seconds))


def dead_run_id() -> str:
    """A pay run id (host:pid:nonce) of this host whose process has exited."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return f"{socket.gethostname()}:{child.stdout.strip()}:deadbeef"


def elsewhere_run_id() -> str:
    """A pay run id of a process on another host: alive as long as it beats."""
    return "worker-7.example:4242:cafe0001"
