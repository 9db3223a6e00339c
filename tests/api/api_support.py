"""Helpers of the client tests: a retry policy with pinned jitter, a token, a payout request."""

from __future__ import annotations

from decimal import Decimal

from payflow.api.models import PayoutAccount, PayoutRequest
from payflow.api.retry import RetryPolicy

TOKEN = "tok-7f3e9a-very-secret"


class PinnedRetry(RetryPolicy):
    """Full backoff, no randomness: delays are exactly base * 2**(attempt-1)."""

    def _jitter(self) -> float:
        return 1.0


FAST_RETRY = PinnedRetry(max_retries=3, base_delay=0.001, max_delay=0.01, max_retry_after=5.0)


def payout_request(
    external_id: str = "ext-1",
    amount: str = "100.50",
    requisites: str = "79001234567",
    bank_name: str = "bank-a",
) -> PayoutRequest:
    """An SBP payout request with a bank id."""
    return PayoutRequest(
        amount=Decimal(amount),
        currency="RUB",
        payment_type="SBP",
        external_id=external_id,
        account=PayoutAccount(
            name="Ivan Petrov", requisites=requisites, user_id="user-1", bank_name=bank_name
        ),
    )


PAYOUT_JSON = {
    "id": "2b1e8f3c-0000-4000-8000-000000000001",
    "merchantId": "3f6c1a52-8d4e-4b7a-9c1e-5a2b7d9e0f13",
    "amount": "100.50",
    "account": {"name": "Ivan Petrov", "requisites": "79001234567", "userId": "user-1"},
    "status": "CREATED",
    "type": "SBP",
    "requisites": {},
    "statusMessage": None,
    "metadata": None,
    "callbackUrl": None,
    "createdAt": "2024-05-01T12:00:00Z",
    "updatedAt": "2024-05-01T12:00:00Z",
    "completedAt": None,
}
