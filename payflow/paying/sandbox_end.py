"""A run whose embedded sandbox ends with it asks the sandbox, first, to apply its pending payout
moves (a correction due seconds after completion), so the run's report reads their last word:
the sample's 6666 row read COMPLETED for good, its correction dropped when the sandbox stopped."""

from __future__ import annotations

import httpx

SETTLE_PATH = "/_sandbox/settle"  # the sandbox's route outside /v1 (payflow.sandbox.platform_moves)


def settle_sandbox(api_url: str, *, timeout: float = 10.0) -> int | None:
    """Ask the embedded sandbox at `api_url` to apply every pending payout move now; how many it
    applied, or None when it could not be asked (the run then says its payouts are unchecked)."""
    try:
        response = httpx.post(f"{api_url.rstrip('/')}{SETTLE_PATH}", timeout=timeout)
        response.raise_for_status()
        return int(response.json()["applied"])
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return None
