"""The payout state machine: create with a hold, then CREATED -> PROCESSING -> final, in the
background.

The outcome is chosen by the last four characters of `account.requisites` (see OUTCOMES).
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from payflow.sandbox.errors import conflict
from payflow.sandbox.state import SandboxState, now_iso
from payflow.sandbox.validation import PayoutDraft, format_amount

PAYOUT_UPDATE = "PAYOUT_UPDATE"
STUCK = None  # the payout stays PROCESSING forever
CORRECTED = "CORRECTED"  # COMPLETED, later turned FAILED by the platform without a webhook
CORRECTION_MESSAGE = "Corrected by the platform after a bank-side error"

# last four characters of requisites -> (final status, statusMessage); anything else COMPLETED
OUTCOMES: dict[str, tuple[str | None, str | None]] = {
    "1111": ("FAILED", "Recipient account is blocked"),
    "2222": ("FAILED", "Recipient not found"),
    "3333": ("CANCELED", None),
    "4444": ("EXPIRED", None),
    "5555": (STUCK, None),
    "6666": (CORRECTED, None),
}
RELEASING = frozenset({"FAILED", "CANCELED", "EXPIRED"})
FINAL = RELEASING | {"COMPLETED"}


def outcome_for(requisites: str) -> tuple[str | None, str | None]:
    """The deterministic final status and message for these requisites."""
    return OUTCOMES.get(requisites[-4:], ("COMPLETED", None))


def create_payout(state: SandboxState, draft: PayoutDraft) -> dict[str, Any]:
    """Refuse a reused externalId (409), hold the amount (409 when short), store, schedule moves."""
    if draft.external_id is not None and draft.external_id in state.payout_ids_by_external:
        raise conflict(
            "DUPLICATE_EXTERNAL_ID",
            "a payout with this externalId already exists for this merchant",
        )
    state.balances.hold(draft.currency, draft.amount, "payout")
    created = now_iso()
    payout: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "merchantId": state.config.merchant_id,
        "externalId": draft.external_id,
        "amount": format_amount(draft.amount),
        "currency": draft.currency,
        "account": draft.account,
        "status": "CREATED",
        "type": draft.payment_type,
        "requisites": {},
        "statusMessage": None,
        "metadata": None,
        "callbackUrl": draft.callback_url,
        "createdAt": created,
        "updatedAt": created,
        "completedAt": None,
    }
    state.payouts[payout["id"]] = payout
    state.payout_holds[payout["id"]] = (draft.currency, draft.amount)
    if draft.external_id is not None:
        state.payout_ids_by_external[draft.external_id] = payout["id"]
    final, message = outcome_for(draft.account["requisites"])
    state.timers.later(
        state.config.processing_delay,
        lambda: _to_processing(state, payout["id"], final, message),
        settles=True,
    )
    return payout


def _to_processing(
    state: SandboxState, payout_id: str, final: str | None, message: str | None
) -> None:
    _move(state, payout_id, "PROCESSING", None, more=final is not STUCK)
    if final is STUCK:
        return
    state.timers.later(
        state.config.final_delay,
        lambda: _to_final(state, payout_id, final, message),
        settles=True,
    )


def _to_final(state: SandboxState, payout_id: str, final: str, message: str | None) -> None:
    status = "COMPLETED" if final == CORRECTED else final
    _move(state, payout_id, status, message, more=False)
    currency, amount = state.payout_holds.pop(payout_id)
    if status == "COMPLETED":
        state.balances.debit(currency, amount)
    else:
        state.balances.release(currency, amount)
    if final == CORRECTED:
        state.timers.later(
            state.config.correction_delay,
            lambda: _correct(state, payout_id, currency, amount),
            settles=True,
        )


def _correct(state: SandboxState, payout_id: str, currency: str, amount: Decimal) -> None:
    """The platform's manual correction: COMPLETED -> FAILED, debit returned, no webhook."""
    payout = state.payouts[payout_id]
    payout.update(status="FAILED", statusMessage=CORRECTION_MESSAGE, updatedAt=now_iso())
    state.balances.credit(currency, amount)


def _move(
    state: SandboxState, payout_id: str, status: str, message: str | None, *, more: bool
) -> None:
    payout = state.payouts[payout_id]
    stamp = now_iso()
    payout.update(status=status, statusMessage=message, updatedAt=stamp)
    if status in FINAL:
        payout["completedAt"] = stamp
    url = state.callback_url(payout["callbackUrl"])
    state.webhooks.send(PAYOUT_UPDATE, url, dict(payout), key=payout_id, more=more)


def force_status(state: SandboxState, payout_id: str, status: str, message: str | None) -> None:
    """Test-only: move a payout to any status later, the balance following; no webhook is sent
    (as with the platform's manual corrections)."""
    payout = state.payouts[payout_id]
    before = payout["status"]
    held = state.payout_holds.pop(payout_id, None)
    currency, amount = payout["currency"], Decimal(payout["amount"])
    if held is not None:  # still pending: settle the hold first
        if status == "COMPLETED":
            state.balances.debit(currency, amount)
        elif status in RELEASING:
            state.balances.release(currency, amount)
        else:
            state.payout_holds[payout_id] = held
    elif before == "COMPLETED" and status in RELEASING:
        state.balances.credit(currency, amount)
    elif before in RELEASING and status == "COMPLETED":
        state.balances.credit(currency, -amount)
    stamp = now_iso()
    payout.update(status=status, statusMessage=message, updatedAt=stamp)
    if status in FINAL:
        payout["completedAt"] = stamp


def force_amount(state: SandboxState, payout_id: str, amount: Decimal, currency: str) -> None:
    """Test-only: change what the service reports as the payout's amount (balances untouched)."""
    state.payouts[payout_id].update(amount=format_amount(amount), currency=currency)
