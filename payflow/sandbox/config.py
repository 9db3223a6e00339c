"""Settings of the sandbox: identity, balances, timings, webhook delivery and fault injection.

`SandboxConfig` is frozen and fixed when the server starts; the fault part is copied into a
mutable `FaultSettings` that `POST /_sandbox/faults` may change while the server runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from payflow.settings import SANDBOX_TOKEN_DEFAULT

ENV_PREFIX = "PAYFLOW_SANDBOX_"
MERCHANT_ID_DEFAULT = "3f6c1a52-8d4e-4b7a-9c1e-5a2b7d9e0f13"
BALANCE_DEFAULT = Decimal("1000000000")
BALANCE_CURRENCIES = (
    "RUB",
    "XOF",
    "CDF",
    "GHS",
    "KES",
    "NGN",
    "ZAR",
    "UGX",
    "TZS",
    "ZMW",
    "BDT",
    "USD",
    "EUR",
)


@dataclass
class FaultSettings:
    """Rates are probabilities in [0, 1] drawn from one seeded `random.Random`."""

    latency: float = 0.0  # seconds added to every /v1 request
    error_rate: float = 0.0  # 500 or 503 (even split) before the handler runs
    rate_limit_rate: float = 0.0  # 429 with Retry-After before the handler runs
    retry_after: int = 1  # seconds, the Retry-After of an injected 429
    lost_response_rate: float = 0.0  # POST /v1/payouts: payout created, connection cut mid-body
    webhook_drop_rate: float = 0.0  # the event is never delivered
    webhook_duplicate_rate: float = 0.0  # the event is delivered twice
    webhook_reorder_rate: float = 0.0  # PROCESSING delivered after the final status
    webhook_bad_signature_rate: float = 0.0  # X-Signature does not match the body
    fail_first: int = 0  # the next N /v1 requests answer 503 (set again: N more), then rates apply
    seed: int = 0

    def updated(self, changes: Mapping[str, Any]) -> FaultSettings:
        """A copy with `changes` applied (snake_case or camelCase keys); ValueError when invalid."""
        known = {f.name: f.type for f in fields(self)}
        values: dict[str, Any] = {}
        for key, value in changes.items():
            name = _snake(key)
            if name not in known:
                raise ValueError(f"unknown fault setting: {key}")
            if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
                raise ValueError(f"fault setting {key} must be a number")
            values[name] = _coerce(name, str(value))
        result = replace(self, **values)
        result.check()
        return result

    def check(self) -> None:
        """Raise ValueError when a rate is outside [0, 1] or a duration is negative."""
        for name, value in asdict(self).items():
            if name.endswith("_rate") and not 0 <= value <= 1:
                raise ValueError(f"{name} must be between 0 and 1")
            if name in {"latency", "retry_after", "fail_first"} and value < 0:
                raise ValueError(f"{name} must not be negative")

    def as_json(self) -> dict[str, Any]:
        """The settings as a JSON object (snake_case keys)."""
        return asdict(self)


@dataclass(frozen=True)
class SandboxConfig:
    """Everything the sandbox can be configured with; `from_env()` reads PAYFLOW_SANDBOX_*."""

    token: str = SANDBOX_TOKEN_DEFAULT
    merchant_id: str = MERCHANT_ID_DEFAULT
    balances: Mapping[str, Decimal] = field(
        default_factory=lambda: dict.fromkeys(BALANCE_CURRENCIES, BALANCE_DEFAULT)
    )
    merchant_callback_url: str | None = None  # "merchant settings" address when none is passed
    processing_delay: float = 0.2  # CREATED -> PROCESSING, seconds
    final_delay: float = 0.5  # PROCESSING -> final status (also refund PENDING -> COMPLETED)
    correction_delay: float = 3.0  # `6666`: COMPLETED -> FAILED by the platform, no webhook
    webhook_max_attempts: int = 5
    webhook_backoff: float = 0.5  # first retry delay; doubles each attempt
    webhook_timeout: float = 5.0
    webhook_concurrency: int = 64
    h2h_sms_code: str = "123456"
    faults: FaultSettings = field(default_factory=FaultSettings)

    def __repr__(self) -> str:
        return f"SandboxConfig(merchant_id={self.merchant_id!r}, faults={self.faults!r})"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SandboxConfig:
        """Build from PAYFLOW_SANDBOX_<FIELD> variables; ValueError names a bad one."""
        env = os.environ if environ is None else environ
        top: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is None or f.name == "faults":
                continue
            top[f.name] = _parse_balances(raw) if f.name == "balances" else _coerce(f.name, raw)
        fault_values = {
            f.name: env[ENV_PREFIX + f.name.upper()]
            for f in fields(FaultSettings)
            if ENV_PREFIX + f.name.upper() in env
        }
        return cls(**top, faults=FaultSettings().updated(fault_values))

    def with_overrides(self, **overrides: Any) -> SandboxConfig:
        """A copy with top-level fields or fault settings (by name) replaced."""
        fault_names = {f.name for f in fields(FaultSettings)}
        fault_changes = {k: v for k, v in overrides.items() if k in fault_names}
        top = {k: v for k, v in overrides.items() if k not in fault_names}
        if fault_changes:
            top["faults"] = top.get("faults", self.faults).updated(fault_changes)
        return replace(self, **top)


_TYPES: dict[str, type] = {
    **{f.name: f.type for f in fields(FaultSettings)},  # type: ignore[misc]
    "token": str,
    "merchant_id": str,
    "merchant_callback_url": str,
    "processing_delay": float,
    "final_delay": float,
    "correction_delay": float,
    "webhook_max_attempts": int,
    "webhook_backoff": float,
    "webhook_timeout": float,
    "webhook_concurrency": int,
    "h2h_sms_code": str,
}


def _coerce(name: str, raw: str) -> Any:
    kind = _TYPES[name]
    if kind in ("int", int):
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{name} must be a whole number") from None
    if kind in ("float", float):
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"{name} must be a number") from None
    return raw


def _parse_balances(raw: str) -> dict[str, Decimal]:
    """`RUB=1000,XOF=500000` -> per-currency balances; currencies not named start at zero."""
    result: dict[str, Decimal] = {}
    for part in filter(None, (p.strip() for p in raw.split(","))):
        currency, _, amount = part.partition("=")
        try:
            result[currency.strip().upper()] = Decimal(amount.strip())
        except InvalidOperation:
            raise ValueError(f"balances: bad amount for {currency.strip()}") from None
    return result


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
