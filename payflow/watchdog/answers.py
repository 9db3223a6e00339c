"""Recording an answer typed into a dead run's pause form: the one place the watchdog does it.

The form's answer goes through the same checks as one the live run reads
(`approvals.view.record_prefect_answer`: maker is not checker, one person once, warnings
acknowledged, a decline with its reason). Keep this the only call, so that a change of how the
form's answers are checked (identity, one-time codes) changes the watchdog with it.
"""

from __future__ import annotations

from typing import Any

from payflow.approvals.policy import ApprovalPolicy
from payflow.approvals.view import record_prefect_answer
from payflow.ledger import Ledger


def record_form_answer(
    ledger: Ledger, batch_id: str, policy: ApprovalPolicy, answer: dict[str, Any]
) -> str | None:
    """Record one answer of Prefect's approval form; None when recorded (or already settled),
    else why it was refused."""
    approver = answer.get("approver")
    if not isinstance(approver, str) or not isinstance(answer.get("approve"), bool):
        return "the form's answer has no approve and approver"
    return record_prefect_answer(
        ledger,
        batch_id,
        policy,
        approve=bool(answer["approve"]),
        approver=approver,
        acknowledge_warnings=bool(answer.get("acknowledge_warnings", False)),
        decline_reason=str(answer.get("decline_reason", "")),
    )
