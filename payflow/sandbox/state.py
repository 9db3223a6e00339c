"""Everything the sandbox remembers, owned by the app's event loop (never touched from threads).

Handlers mutate state without awaiting between a check and its write, so one loop is the lock.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request

from payflow.sandbox.balances import Balances
from payflow.sandbox.config import FaultSettings, SandboxConfig
from payflow.sandbox.webhooks import WebhookSender


def now_iso() -> str:
    """Current time as ISO 8601 UTC with a `Z`, milliseconds precision."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Timers:
    """One scheduler for every delayed move: `loop.call_later` handles, cancelled on shutdown.
    A payout's moves (`settles`) can be applied at once before the sandbox stops: `settle`."""

    def __init__(self) -> None:
        self._handles: dict[asyncio.TimerHandle, tuple[Callable[[], None], bool]] = {}

    def later(self, delay: float, action: Callable[[], None], *, settles: bool = False) -> None:
        """Run `action` on the loop after `delay` seconds (`settles`: or sooner, by `settle`)."""
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def run() -> None:
            assert handle is not None
            self._handles.pop(handle, None)
            action()

        handle = loop.call_later(max(delay, 0.0), run)
        self._handles[handle] = (action, settles)

    def settle(self, rounds: int = 10) -> int:
        """Apply every pending payout move now, and the moves those schedule (a completion, then
        the platform's correction), `rounds` deep; how many were applied. An embedded sandbox
        that ends with its run dropped a correction due 3 s after the payout completed, and the
        run's report said COMPLETED of a payout the platform was about to take back."""
        applied = 0
        for _ in range(rounds):
            due = [(h, action) for h, (action, settles) in self._handles.items() if settles]
            if not due:
                break
            for handle, action in due:
                handle.cancel()
                self._handles.pop(handle, None)
                action()
                applied += 1
        return applied

    def cancel_all(self) -> None:
        """Forget every pending move (server shutdown)."""
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()

    def __len__(self) -> int:
        return len(self._handles)


class SandboxState:
    """Merchant data, payouts, orders, refunds, counters, faults and the background machinery."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.faults: FaultSettings = config.faults
        self.rng = random.Random(config.faults.seed)
        self.failures_left = config.faults.fail_first  # requests `fail_first` still refuses
        self.balances = Balances(config.balances)
        self.payouts: dict[str, dict[str, Any]] = {}
        self.payout_ids_by_external: dict[str, str] = {}
        self.payout_holds: dict[str, tuple[str, Any]] = {}  # id -> (currency, held amount)
        self.create_attempts: Counter[str] = Counter()
        self.bank_lookups: Counter[str] = Counter()  # phone -> GET /v1/payouts/banks
        self.payout_reads: Counter[str] = Counter()  # payout id -> GET /v1/payouts/{id}
        self.balance_reads = 0  # GET /v1/merchants/balance
        self.requests_in_flight = 0  # /v1 requests received and not yet answered
        self.peak_in_flight = 0  # the most at once: a client's concurrency as the service sees it
        self.orders: dict[str, dict[str, Any]] = {}
        self.order_ids_by_external: dict[str, str] = {}
        self.h2h: dict[str, dict[str, Any]] = {}
        self.refunds: dict[str, dict[str, Any]] = {}
        self.refund_ids_by_external: dict[str, str] = {}
        self.refund_attempts: Counter[str] = Counter()  # refund externalId -> POSTs handled
        self.orders_without_api_refunds: set[str] = set()  # their refunds answer 403
        self.timers = Timers()
        self.webhooks = WebhookSender(config, lambda: self.faults, self.rng)

    def set_faults(self, changes: dict[str, Any]) -> FaultSettings:
        """Apply run-time fault changes; a new seed restarts the random sequence."""
        self.faults = self.faults.updated(changes)
        if "seed" in changes:
            self.rng.seed(self.faults.seed)
        if {"fail_first", "failFirst"} & changes.keys():
            self.failures_left = self.faults.fail_first
        return self.faults

    def callback_url(self, *candidates: str | None) -> str | None:
        """The first address given, else the merchant settings address (may be None)."""
        for url in candidates:
            if url:
                return url
        return self.config.merchant_callback_url

    def stats(self) -> dict[str, Any]:
        """The inspection view: GET /_sandbox/stats."""
        by_external: Counter[str] = Counter(
            p["externalId"] for p in self.payouts.values() if p.get("externalId") is not None
        )
        return {
            "merchantId": self.config.merchant_id,
            "payouts": list(self.payouts.values()),
            "createAttempts": dict(self.create_attempts),
            "bankLookups": sum(self.bank_lookups.values()),
            "bankLookupsByPhone": dict(self.bank_lookups),
            "payoutsByExternalId": dict(by_external),
            "payoutReads": sum(self.payout_reads.values()),
            "payoutReadsById": dict(self.payout_reads),
            "balanceReads": self.balance_reads,
            "peakRequestsInFlight": self.peak_in_flight,
            "balances": self.balances.as_json(),
            "orders": list(self.orders.values()),
            "refunds": list(self.refunds.values()),
            "refundCreateAttempts": dict(self.refund_attempts),
            "refundsByExternalId": dict(
                Counter(r["externalId"] for r in self.refunds.values() if r["externalId"])
            ),
            "refundsByOrderId": dict(Counter(r["orderId"] for r in self.refunds.values())),
            "webhooks": self.webhooks.stats(),
            "pendingMoves": len(self.timers),
            "faults": self.faults.as_json(),
        }


def state_of(request: Request) -> SandboxState:
    """The sandbox state of the app serving `request`."""
    state: SandboxState = request.app.state.sandbox
    return state
