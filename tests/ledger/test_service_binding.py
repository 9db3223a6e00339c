"""A ledger's binding to one payments service: its kind, and of an API the merchant."""

from __future__ import annotations

import pytest

from payflow.ledger import Ledger
from payflow.ledger.service_binding import API, SANDBOX, bind_merchant, bind_service

MERCHANT_A = "6d1c3c0e-2f7a-4c55-9a51-0c8d7e3b1a01"
MERCHANT_B = "9b4e2d71-5a3c-4e8f-b1d6-2c7a8e9f0b02"


def test_the_first_kind_and_merchant_stand(sqlite_url: str) -> None:
    with Ledger.open(sqlite_url) as ledger:
        assert bind_service(ledger, API) == API
        assert bind_service(ledger, SANDBOX) == API
        assert bind_merchant(ledger, MERCHANT_A) == MERCHANT_A
        # A later run with another merchant's token learns the recorded one, which stays.
        assert bind_merchant(ledger, MERCHANT_B) == MERCHANT_A
        assert bind_merchant(ledger, MERCHANT_A) == MERCHANT_A


def test_a_merchant_needs_a_bound_ledger(sqlite_url: str) -> None:
    with Ledger.open(sqlite_url) as ledger, pytest.raises(LookupError):
        bind_merchant(ledger, MERCHANT_A)
