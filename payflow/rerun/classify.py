"""Failure classes: what kind of failure a row had and what the operator should do next.

This is the minimal stand-in for the reconciliation stage's table
(`payflow/defaults/failure_classes.csv`); the rerun code only calls `classify`, so swapping
the table in changes nothing else.
"""

from __future__ import annotations

from typing import Literal

FailureClass = Literal["retryable", "fix_details", "do_not_retry", "unknown"]
FAILURE_CLASSES: tuple[FailureClass, ...] = ("retryable", "fix_details", "do_not_retry", "unknown")

# statusMessage (case-insensitive) -> class and next step; the sandbox's messages and the
# ledger's own states are the ones known today.
_BY_MESSAGE: dict[str, tuple[FailureClass, str]] = {
    "recipient not found": (
        "fix_details",
        "check the requisites with the recipient; rerun with --corrections",
    ),
    "recipient account is blocked": (
        "do_not_retry",
        "ask the recipient for another account; rerun only with --corrections",
    ),
    "corrected by the platform after a bank-side error": (
        "retryable",
        "the bank reversed the payout; rerun as is",
    ),
}
_BY_STATUS: dict[str, tuple[FailureClass, str]] = {
    "CANCELED": ("retryable", "rerun as is once the reason is known"),
    "EXPIRED": ("retryable", "rerun as is"),
    "SUBMIT_REJECTED": (
        "fix_details",
        "read the service's message; fix the row with --corrections",
    ),
}
_UNKNOWN: tuple[FailureClass, str] = ("unknown", "ask the payments service's manager why")


def classify(status: str, status_message: str | None) -> tuple[FailureClass, str]:
    """The failure class and next step of a failed row, from its status and statusMessage."""
    if status_message:
        known = _BY_MESSAGE.get(status_message.strip().casefold())
        if known is not None:
            return known
    return _BY_STATUS.get(status.upper(), _UNKNOWN)
