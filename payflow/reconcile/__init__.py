"""Reconciliation: file, ledger and service side by side, findings, and the balance roll-forward.

`reconcile_batch` re-fetches a batch's payouts and syncs its findings; `take_snapshot` reads the
merchant balance (phase PAYING when a batch starts paying, RECONCILE at reconciliation);
`roll_forward` compares them; `FailureClasses` says what to do about each failed row.

The names below load on first use: an approval check needs `FailureClass` alone, and `payflow
status`, `batches` and `approve` would otherwise import the API client (httpx) and the paying
package through `balance`, `detect` and `run` (about 0.25 s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from payflow.lazy_names import names_loader

if TYPE_CHECKING:
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
    from payflow.reconcile.run import (
        ReconcileOptions,
        ReconcileResult,
        options_from,
        reconcile_batch,
    )

_HOMES = {
    "DRIFT_CAVEAT": "balance",
    "PAYING": "balance",
    "RECONCILE": "balance",
    "Classification": "classes",
    "FailureClass": "classes",
    "FailureClasses": "classes",
    "FailureTableError": "classes",
    "ReconcileOptions": "run",
    "ReconcileResult": "run",
    "RollForward": "balance",
    "balance_lines": "balance",
    "options_from": "run",
    "reconcile_batch": "run",
    "roll_forward": "balance",
    "stuck_limit": "detect",
    "take_snapshot": "balance",
}

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


__getattr__ = names_loader(__name__, _HOMES)
