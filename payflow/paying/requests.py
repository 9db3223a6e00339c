"""From a ledger row to a payout request, and back: does a found payout match the row?

Both directions live here so that what is sent and what is compared cannot drift apart.
"""

from __future__ import annotations

from payflow.api.models import Payout, PayoutAccount, PayoutRequest
from payflow.model import PaymentType, PayoutInstruction


def build_payout_request(
    instruction: PayoutInstruction, *, callback_url: str | None
) -> PayoutRequest:
    """The POST /v1/payouts body for one row; `callback_url` wins over the row's own."""
    return PayoutRequest(
        amount=instruction.amount,
        currency=instruction.currency,
        payment_type=instruction.payment_type,
        external_id=instruction.external_id,
        service_id=instruction.service_id,
        note=instruction.note,
        callback_url=callback_url or instruction.callback_url,
        account=PayoutAccount(
            name=instruction.name,
            requisites=instruction.requisites,
            user_id=instruction.user_id,
            bank_name=instruction.bank_name,
            user_email=instruction.user_email,
            user_phone=instruction.user_phone,
            user_ip=instruction.user_ip,
        ),
    )


def payout_differences(instruction: PayoutInstruction, payout: Payout) -> list[str]:
    """Names of the fields where the found payout differs from the row (empty: same payout).

    Only field names are returned, never values, so the list is safe in logs and reports.
    A field the service did not echo back cannot be compared and is not counted as a difference.
    """
    differences: list[str] = []
    if payout.amount is not None and payout.amount != instruction.amount:
        differences.append("amount")
    if payout.currency and payout.currency.upper() != instruction.currency.upper():
        differences.append("currency")
    if payout.type and payout.type.upper() != instruction.payment_type.upper():
        differences.append("paymentType")
    account = payout.account
    if account is not None:
        if account.requisites is not None and account.requisites != instruction.requisites:
            differences.append("requisites")
        if account.user_id is not None and account.user_id != instruction.user_id:
            differences.append("userId")
        if (
            instruction.payment_type.upper() == PaymentType.SBP
            and account.bank_name is not None
            and account.bank_name != instruction.bank_name
        ):
            differences.append("bankName")
    return differences
