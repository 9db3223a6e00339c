"""Signed webhook delivery in the background, with retries and the webhook faults.

The body is the object's JSON (the payout, refund or order object, exactly as GET returns it);
`X-Signature` is the lowercase hex HMAC-SHA512 of those raw bytes keyed with the API token.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from payflow.http_pools import pooled_http_client
from payflow.sandbox.config import FaultSettings, SandboxConfig
from payflow.sandbox.posting import KeptAlivePoster, PostFailed, target_of


def sign(body: bytes, token: str) -> str:
    """Lowercase hex HMAC-SHA512 of `body` keyed with `token`."""
    return hmac.new(token.encode("utf-8"), body, hashlib.sha512).hexdigest()


def encode_body(payload: dict[str, Any]) -> bytes:
    """The exact bytes sent (and signed): compact UTF-8 JSON."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class Webhook:
    """One event to deliver: its X-Type, address and body."""

    kind: str
    url: str
    body: bytes
    key: str  # the object id: holds back an event for reordering


class WebhookSender:
    """Delivers webhooks from the app's event loop without blocking any request."""

    def __init__(
        self,
        config: SandboxConfig,
        faults: Callable[[], FaultSettings],
        rng: random.Random,
    ) -> None:
        self._config = config
        self._faults = faults
        self._rng = rng
        self._client: httpx.AsyncClient | None = None
        self._poster = KeptAlivePoster(config.webhook_timeout, keep=config.webhook_concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._held_back: dict[str, Webhook] = {}
        self._slots = asyncio.Semaphore(config.webhook_concurrency)
        self.counts: Counter[str] = Counter()

    async def close(self) -> None:
        """Cancel deliveries still in flight and close the client."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._poster.close()
        if self._client is not None:
            await self._client.aclose()

    def send(
        self, kind: str, url: str | None, payload: dict[str, Any], *, key: str, more: bool
    ) -> None:
        """Queue one event; `more` says a later event for the same object will follow."""
        if url is None:
            self.counts["noAddress"] += 1
            return
        webhook = Webhook(kind, url, encode_body(payload), key)
        faults = self._faults()
        held = self._held_back.pop(key, None)
        if more and self._rng.random() < faults.webhook_reorder_rate:
            self.counts["reordered"] += 1
            self._held_back[key] = webhook  # delivered right after the next event of this object
            return
        sequence = [webhook] if held is None else [webhook, held]
        self._spawn(self._deliver_in_order(sequence, faults))

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver_in_order(self, sequence: list[Webhook], faults: FaultSettings) -> None:
        for webhook in sequence:
            if self._rng.random() < faults.webhook_drop_rate:
                self.counts["dropped"] += 1
                continue
            copies = 2 if self._rng.random() < faults.webhook_duplicate_rate else 1
            bad_signature = self._rng.random() < faults.webhook_bad_signature_rate
            self.counts["duplicated"] += copies - 1
            self.counts["badSignature"] += int(bad_signature)
            for _ in range(copies):
                await self._deliver(webhook, bad_signature)

    async def _deliver(self, webhook: Webhook, bad_signature: bool) -> None:
        key = self._config.token + ("-wrong" if bad_signature else "")
        headers = {
            "Content-Type": "application/json",
            "X-Type": webhook.kind,
            "X-Signature": sign(webhook.body, key),
        }
        for attempt in range(self._config.webhook_max_attempts):
            if attempt:
                await asyncio.sleep(self._config.webhook_backoff * 2 ** (attempt - 1))
            self.counts["attempts"] += 1
            async with self._slots:
                try:
                    status = await self._post(webhook, headers)
                except (httpx.HTTPError, PostFailed):
                    continue
            if 200 <= status < 300:
                self.counts["delivered"] += 1
                return
        self.counts["failed"] += 1

    async def _post(self, webhook: Webhook, headers: dict[str, str]) -> int:
        """One attempt: the answer's status code."""
        target = target_of(webhook.url)
        if target is not None:
            raw = [(name.encode(), value.encode()) for name, value in headers.items()]
            return await self._poster.post(target, webhook.body, raw)
        if self._client is None:
            # Opened by the first https webhook: its TLS set-up cost every sandbox's start.
            # The API client's transport: httpcore's pool costs several times the CPU per
            # webhook, and the sandbox shares the machine with the run it serves.
            self._client = pooled_http_client(
                self._config.webhook_concurrency, timeout=self._config.webhook_timeout
            )
        response = await self._client.post(webhook.url, content=webhook.body, headers=headers)
        return response.status_code

    def stats(self) -> dict[str, int]:
        """Counters: delivered, failed, attempts, dropped, duplicated, reordered, badSignature."""
        names = ("delivered", "failed", "attempts", "dropped", "duplicated", "reordered")
        result = {name: self.counts[name] for name in names}
        result.update(
            badSignature=self.counts["badSignature"],
            noAddress=self.counts["noAddress"],
            inFlight=len(self._tasks),
        )
        return result
