"""Typed client of the payments service: models, the error tree, signing, webhooks, throttling.

The names below load on first use: the ledger (links' webhooks), the error tree and the signing
modules are imported by commands that never call the service, and this package's init would
otherwise import the clients and httpx with them (about 0.1-0.2 s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from payflow.lazy_names import names_loader

if TYPE_CHECKING:
    from payflow.api.async_client import AsyncPayoutsClient
    from payflow.api.client import PayoutsClient
    from payflow.api.retry import RetryPolicy
    from payflow.api.throttle import Throttle

_HOMES = {
    "AsyncPayoutsClient": "async_client",
    "PayoutsClient": "client",
    "RetryPolicy": "retry",
    "Throttle": "throttle",
}

__all__ = ["AsyncPayoutsClient", "PayoutsClient", "RetryPolicy", "Throttle"]


__getattr__ = names_loader(__name__, _HOMES)
