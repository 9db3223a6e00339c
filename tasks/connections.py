"""How a task reaches the API and the ledger: from a RunTarget, never from secrets in parameters.

A RunTarget travels as a task parameter and so may be recorded by Prefect; it carries no token.
The token is read from Settings inside the task that needs it.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from dataclasses import dataclass

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger
from payflow.runtime import api_token
from payflow.settings import Settings


@dataclass(frozen=True)
class RunTarget:
    """Where one run pays: API base URL, ledger URL, callback URL, and whether it is the sandbox."""

    api_url: str
    ledger_url: str
    sandbox: bool
    callback_url: str | None = None


def open_client(
    target: RunTarget, settings: Settings | None = None, *, lanes: int = 1
) -> AsyncPayoutsClient:
    """An async client bound to the target with its share (of `lanes`) of the configured bounds
    on requests in flight and per second."""
    settings = settings or Settings()
    per_second = settings.max_requests_per_second
    return AsyncPayoutsClient(
        api_token(settings, sandbox=target.sandbox),
        base_url=target.api_url,
        timeout=settings.request_timeout,
        max_in_flight=max(1, settings.max_in_flight // lanes),
        max_requests_per_second=per_second / lanes if per_second else None,
    )


_ledgers: dict[str, Ledger] = {}
_ledgers_lock = threading.Lock()


def open_ledger(url: str) -> Ledger:
    """The process's one Ledger for `url` (migrated once, shared by every task thread)."""
    with _ledgers_lock:
        ledger = _ledgers.get(url)
        if ledger is None:
            ledger = _ledgers[url] = Ledger.open(url)
        return ledger


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
