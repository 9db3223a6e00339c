"""Paying a batch exactly once (invariant 1) and following it to final statuses.

`submit_batch` / `submit_chunk` / `submit_claimed` run the submit protocol over the ledger's
claims; `check_balance` stops a batch that would overdraw a currency; `track_batch` polls what
webhooks did not settle. The platform's manual corrections are found by `payflow.reconcile`.
"""

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
from payflow.paying.track import Fetched, TrackResult, fetch_payout, refresh_batch, track_batch

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
