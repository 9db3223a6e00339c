"""Recording an answer typed into a dead run's pause form: the one place the watchdog does it.

The form's answer goes through the same checks as one the live run reads
(`approvals.view.record_prefect_answer`: maker is not checker, one person once, warnings
acknowledged, a decline with its reason). Keep this the only call, so that a change of how the
form's answers are checked (identity, one-time codes) changes the watchdog with it.
"""

from __future__ import annotations

from typing import Any

from payflow.approvals.view import record_prefect_answer
from payflow.ledger import Ledger


def record_form_answer(ledger: Ledger, batch_id: str, answer: dict[str, Any]) -> str | None:
    """Record one answer of Prefect's approval form; None when recorded (or already settled),
    else why it was refused. It counts only with the checker's one-time approval code."""
    if not isinstance(answer.get("approve"), bool):
        return "the form's answer has no approve"
    return record_prefect_answer(
        ledger,
        batch_id,
        approve=bool(answer["approve"]),
        approval_code=str(answer.get("approval_code", "")),
        acknowledge_warnings=bool(answer.get("acknowledge_warnings", False)),
        decline_reason=str(answer.get("decline_reason", "")),
    )
