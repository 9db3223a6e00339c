"""Reconciliation: file, ledger and service side by side, findings, and the balance roll-forward.

`reconcile_batch` re-fetches a batch's payouts and syncs its findings; `take_snapshot` reads the
merchant balance (phase PAYING when a batch starts paying, RECONCILE at reconciliation);
`roll_forward` compares them; `FailureClasses` says what to do about each failed row.
"""

from payflow.reconcile.balance import (
    DRIFT_CAVEAT,
    PAYING,
    RECONCILE,
    RollForward,
    balance_lines,
    roll_forward,
    take_snapshot,
)
from payflow.reconcile.classes import (
    Classification,
    FailureClass,
    FailureClasses,
    FailureTableError,
)
from payflow.reconcile.detect import stuck_limit
from payflow.reconcile.run import ReconcileOptions, ReconcileResult, options_from, reconcile_batch

__all__ = [
    "DRIFT_CAVEAT",
    "PAYING",
    "RECONCILE",
    "Classification",
    "FailureClass",
    "FailureClasses",
    "FailureTableError",
    "ReconcileOptions",
    "ReconcileResult",
    "RollForward",
    "balance_lines",
    "options_from",
    "reconcile_batch",
    "roll_forward",
    "stuck_limit",
    "take_snapshot",
]
