"""Paying a batch exactly once (invariant 1) and following it to final statuses.

`submit_batch` / `submit_chunk` / `submit_claimed` run the submit protocol over the ledger's
claims; `check_balance` stops a batch that would overdraw a currency; `track_batch` polls what
webhooks did not settle. The platform's manual corrections are found by `payflow.reconcile`.

The names below load on first use: `payflow status` of a batch with rows left reads
`SubmitStats` alone, and this package's init would otherwise import the API client (httpx).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from payflow.lazy_names import names_loader

if TYPE_CHECKING:
    from payflow.paying.balance import (
        BalanceCheck,
        InsufficientBalanceError,
        Shortfall,
        check_balance,
        compare_balance,
    )
    from payflow.paying.batch import ChunkLoop, ChunkResult, submit_batch, submit_chunk
    from payflow.paying.outcomes import Outcome, SubmitStats
    from payflow.paying.recheck import recheck_final
    from payflow.paying.requests import build_payout_request, payout_differences
    from payflow.paying.submit import submit_claimed
    from payflow.paying.track import (
        Fetched,
        TrackResult,
        fetch_payout,
        refresh_batch,
        track_batch,
    )

_HOMES = {
    "BalanceCheck": "balance",
    "ChunkLoop": "batch",
    "ChunkResult": "batch",
    "Fetched": "track",
    "InsufficientBalanceError": "balance",
    "Outcome": "outcomes",
    "Shortfall": "balance",
    "SubmitStats": "outcomes",
    "TrackResult": "track",
    "build_payout_request": "requests",
    "check_balance": "balance",
    "compare_balance": "balance",
    "fetch_payout": "track",
    "payout_differences": "requests",
    "recheck_final": "recheck",
    "refresh_batch": "track",
    "submit_batch": "batch",
    "submit_chunk": "batch",
    "submit_claimed": "submit",
    "track_batch": "track",
}

__all__ = [
    "BalanceCheck",
    "ChunkLoop",
    "ChunkResult",
    "Fetched",
    "InsufficientBalanceError",
    "Outcome",
    "Shortfall",
    "SubmitStats",
    "TrackResult",
    "build_payout_request",
    "check_balance",
    "compare_balance",
    "fetch_payout",
    "payout_differences",
    "recheck_final",
    "refresh_batch",
    "submit_batch",
    "submit_chunk",
    "submit_claimed",
    "track_batch",
]


__getattr__ = names_loader(__name__, _HOMES)
