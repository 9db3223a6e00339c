"""Approval rules per currency, read from `approvals.yaml` (shipped: `payflow/defaults/`)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from payflow.defaults import APPROVALS, default_file
from payflow.wording import counted

ANY_CURRENCY = "*"
MAX_STEPS = 2


class PolicyError(ValueError):
    """The approvals file cannot be used; the message names the file and the problem."""


def _no_float(value: Any) -> Any:
    if isinstance(value, float):
        raise ValueError("write amounts as strings or whole numbers, never as floats")
    return value


class Band(BaseModel):
    """Batch totals up to `up_to` (inclusive; None: no upper end) need `steps` approvals."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    up_to: Decimal | None = None
    steps: int = Field(ge=0, le=MAX_STEPS)

    _amounts = field_validator("up_to", mode="before")(_no_float)


class CurrencyRule(BaseModel):
    """Bands of the batch total, the per-row maximum, and how long a pending approval lives."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bands: tuple[Band, ...] = Field(min_length=1)
    row_max: Decimal | None = None
    expiry_hours: float = Field(default=24, gt=0)

    _amounts = field_validator("row_max", mode="before")(_no_float)

    @field_validator("bands")
    @classmethod
    def _ends_open_and_ascends(cls, bands: tuple[Band, ...]) -> tuple[Band, ...]:
        ends = [b.up_to for b in bands[:-1]]
        if any(e is None for e in ends) or bands[-1].up_to is not None:
            raise ValueError("only the last band may (and must) have no up_to")
        if ends != sorted(e for e in ends if e is not None):
            raise ValueError("bands must ascend by up_to")
        return bands

    @property
    def expiry(self) -> timedelta:
        """How long a batch may wait for approval before it counts as declined."""
        return timedelta(hours=self.expiry_hours)

    def steps_for(self, total: Decimal) -> tuple[int, str]:
        """Approval steps for a batch total, and the rule's wording for the form."""
        lower: Decimal | None = None
        for band in self.bands:
            if band.up_to is None or total <= band.up_to:
                low = f"above {lower}" if lower is not None else "from 0"
                high = f" up to {band.up_to}" if band.up_to is not None else ""
                return band.steps, f"{low}{high}: {counted(band.steps, 'approval step')}"
            lower = band.up_to
        raise AssertionError("the last band has no upper end")


class ApprovalPolicy(BaseModel):
    """Rules per currency code, `*` for any currency not listed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currencies: dict[str, CurrencyRule]

    def rule_for(self, currency: str) -> CurrencyRule:
        """The currency's rule, else the `*` rule; PolicyError when neither exists."""
        rule = self.currencies.get(currency.upper()) or self.currencies.get(ANY_CURRENCY)
        if rule is None:
            raise PolicyError(f"the approvals file has no rule for {currency} and no '*' rule")
        return rule


def load_policy(path: Path | None = None) -> ApprovalPolicy:
    """Read and check an approvals file (the shipped default when None). Only `payflow policy
    set` and the ledger's first version read a file: what pays is the ledger's policy."""
    source = path or default_file(APPROVALS)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"cannot read approvals file {source}: {exc.strerror or exc}") from None
    return parse_policy(text, str(source))


def parse_policy(text: str, source: str) -> ApprovalPolicy:
    """Check an approval policy given as YAML text; `source` names it in an error."""
    try:
        data = yaml.safe_load(text)
        return ApprovalPolicy.model_validate(data)
    except yaml.YAMLError as exc:
        raise PolicyError(f"approvals file {source} is not valid YAML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PolicyError(f"approvals file {source}: {where}: {first['msg']}") from None


def default_policy_text() -> str:
    """The shipped default policy's YAML (the ledger's version 1)."""
    return default_file(APPROVALS).read_text(encoding="utf-8")


def loosenings(old: ApprovalPolicy, new: ApprovalPolicy) -> list[str]:
    """Where `new` asks less than `old` (fewer steps for some total, a higher or no per-row
    maximum, a longer expiry, a currency newly covered): each as one line; [] when none."""
    found: list[str] = []
    for key in sorted({*old.currencies, *new.currencies}):
        before, after = _rule(old, key), _rule(new, key)
        if after is None:
            continue  # no rule: such a batch cannot be approved at all, which loosens nothing
        if before is None:
            found.append(f"{key}: newly covered (had no rule)")
            continue
        for total in _probe_totals(before, after):
            if after.steps_for(total)[0] < before.steps_for(total)[0]:
                found.append(
                    f"{key}: a total of {total} needs {after.steps_for(total)[0]} approval "
                    f"steps instead of {before.steps_for(total)[0]}"
                )
                break
        if before.row_max is not None and (after.row_max is None or after.row_max > before.row_max):
            found.append(f"{key}: per-row maximum {before.row_max} -> {after.row_max or 'none'}")
        if after.expiry_hours > before.expiry_hours:
            found.append(f"{key}: expiry {before.expiry_hours} h -> {after.expiry_hours} h")
    return found


def _rule(policy: ApprovalPolicy, key: str) -> CurrencyRule | None:
    try:
        return policy.rule_for(key)
    except PolicyError:
        return None


def _probe_totals(*rules: CurrencyRule) -> list[Decimal]:
    """0, each band's end and a hair above it: where two rules' steps can differ."""
    ends = {band.up_to for rule in rules for band in rule.bands if band.up_to is not None}
    hair = Decimal("0.000001")
    return sorted({Decimal(0), *ends, *(end + hair for end in ends)})
