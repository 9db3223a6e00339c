"""The sandbox's inspection routes: `GET /_sandbox/stats` and `POST /_sandbox/faults`.

Both take a started server or its base URL (tests that run the CLI only keep the URL).
"""

from __future__ import annotations

from typing import Any

from payflow.sandbox import SandboxServer
from support.servers import kept_client


def _url(server: SandboxServer | str) -> str:
    return server if isinstance(server, str) else server.url


def sandbox_stats(server: SandboxServer | str) -> dict[str, Any]:
    """Everything the sandbox recorded: `payouts`, `createAttempts`, `payoutsByExternalId`,
    `payoutReadsById`, `bankLookups`, balances, orders, refunds, webhook counters, faults."""
    response = kept_client().get(f"{_url(server)}/_sandbox/stats")
    response.raise_for_status()
    stats: dict[str, Any] = response.json()
    return stats


def set_faults(server: SandboxServer | str, **faults: object) -> dict[str, Any]:
    """Change the sandbox's fault settings at run time; the settings now in force."""
    response = kept_client().post(f"{_url(server)}/_sandbox/faults", json=faults)
    response.raise_for_status()
    settings: dict[str, Any] = response.json()
    return settings
