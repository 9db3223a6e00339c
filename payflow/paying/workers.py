"""Worker ids that say which host and process hold a lease, so a dead worker's rows are found."""

from __future__ import annotations

import os
import socket
import uuid

from payflow.ledger import Ledger


def worker_is_dead(worker_id: str) -> bool:
    """True for a worker id of this host whose process no longer exists.

    Leases of workers on other hosts cannot be checked from here; they expire with their lease.
    """
    host, _, rest = worker_id.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def new_worker_id() -> str:
    """host:pid:nonce, so a restarted run on the same host can tell a dead worker's leases."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def release_dead_leases(ledger: Ledger, batch_id: str) -> int:
    """Hand back the leases of this host's workers that no longer run (a killed earlier run)."""
    return sum(
        ledger.release_stale_leases(batch_id, holder)
        for holder in ledger.lease_holders(batch_id)
        if worker_is_dead(holder)
    )
