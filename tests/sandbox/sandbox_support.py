"""Helpers of the sandbox tests: request bodies, polling, stats, a webhook receiver."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

FINAL = {"COMPLETED", "FAILED", "CANCELED", "EXPIRED"}


def payout_body(last4: str = "0001", **changes: Any) -> dict[str, Any]:
    """A valid XOF mobile-money payout request whose requisites end in `last4`."""
    body: dict[str, Any] = {
        "amount": "100",
        "currency": "XOF",
        "paymentType": "SIM",
        "account": {"name": "Awa Kone", "requisites": f"22507000{last4}", "userId": "u-1"},
    }
    body.update(changes)
    return body


def wait_for(client: httpx.Client, path: str, predicate: Any, timeout: float = 5.0) -> dict:
    """Poll GET `path` until `predicate(body)` holds; fails the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(path).json()
        if predicate(body):
            return body
        if time.monotonic() > deadline:
            pytest.fail(f"{path} never matched; last body: {body}")
        time.sleep(0.02)


def balance_of(client: httpx.Client, currency: str) -> dict[str, str]:
    """The balance entry of one currency."""
    balances = client.get("/v1/merchants/balance").json()["balances"]
    return next(b for b in balances if b["currency"] == currency)


@dataclass
class Received:
    """One request the receiver got."""

    at: float
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict:
        return json.loads(self.body)

    def signed_by(self, token: str) -> bool:
        expected = hmac.new(token.encode(), self.body, hashlib.sha512).hexdigest()
        return hmac.compare_digest(expected, self.headers.get("X-Signature", ""))


@dataclass
class WebhookReceiver:
    """A plain http.server on 127.0.0.1 that records POSTs; fails the first `fail_first` ones."""

    fail_first: int = 0
    received: list[Received] = field(default_factory=list)
    refused: list[float] = field(default_factory=list)
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, headers: dict[str, str], body: bytes) -> int:
        with self._lock:
            if len(self.refused) < self.fail_first:
                self.refused.append(time.monotonic())
                return 500
            self.received.append(Received(time.monotonic(), headers, body))
            return 200

    def wait(self, count: int, timeout: float = 5.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count:
            if time.monotonic() > deadline:
                pytest.fail(f"expected {count} webhooks, got {len(self.received)}")
            time.sleep(0.02)
        return list(self.received)
