"""Validation without the API token: the services and banks lists a paying process fetched,
kept in the ledger with when, and what a maker's process reads of them.

A process holding PAYFLOW_API_TOKEN keeps every list it fetches (`keep_fetched`); one without it
validates with those (`kept_lookups`), says how old they are, and leaves the rows it still
cannot check to the paying process (`payflow.paying.precheck`), which checks them before
anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from payflow.intake.lookups import BankInfo, BanksForPhones, ServiceInfo
from payflow.intake.problems import ValidationReport
from payflow.intake.reading import RawBatch
from payflow.runtime import holds_api_token
from payflow.schemas.lookups import NO_SERVICES_LIST, sbp_phones
from payflow.schemas.validation import validate_rows
from payflow.settings import Settings
from payflow.wording import counted

if TYPE_CHECKING:
    from payflow.ledger import Ledger

# The ledger's modules (SQLAlchemy, 0.3-0.5 s) are imported where a ledger is used: `payflow
# validate` on the sandbox or with a token imports this module and opens no ledger.

# Who is speaking in the notes: a command line's or flow's process, and the console.
THIS_PROCESS = "this process holds no PAYFLOW_API_TOKEN"
THIS_CONSOLE = "This console holds no API token (only the paying process does)"


def fetches_lists(settings: Settings, *, sandbox: bool) -> bool:
    """Whether intake asks the service for its lists (and keeps them, `keep_fetched`): on the
    sandbox or holding PAYFLOW_API_TOKEN; otherwise it validates with the kept ones
    (`validate_with_kept`). The one home of the split the flow, `payflow validate` and the
    console's upload make."""
    return sandbox or holds_api_token(settings)


def validate_with_kept(
    ledger: Ledger, raw: RawBatch, *, strict: bool = False, speaker: str = THIS_PROCESS
) -> ValidationReport:
    """Validate with the lists a paying process kept in `ledger`; the report's `not_checked`
    says how old they are (`KeptLookups.told`) and its `unchecked` marks the rows the paying
    process checks before sending (`register_report` records them)."""
    phones = sbp_phones(raw)
    kept = kept_lookups(ledger, phones)
    report = validate_rows(
        raw, services=kept.services, banks_for_phones=kept_banks(kept), strict=strict
    )
    report.not_checked = kept.told(report.not_checked, phones, speaker=speaker)
    return report


def _services_json(services: Sequence[ServiceInfo]) -> str:
    return json.dumps([[s.id, s.payment_type, s.currency] for s in services])


def _banks_json(banks: Sequence[BankInfo]) -> str:
    return json.dumps([[b.id, b.name] for b in banks], ensure_ascii=False)


def keep_fetched(
    ledger: Ledger,
    services: Sequence[ServiceInfo] | None,
    banks: Mapping[str, Sequence[BankInfo]],
) -> None:
    """Keep the lists this process just fetched with its token, for processes without one."""
    from payflow.ledger.kept_lists import BANKS_PREFIX, SERVICES_KEY, keep_lists

    lists = {BANKS_PREFIX + phone: _banks_json(listed) for phone, listed in banks.items()}
    if services is not None:
        lists[SERVICES_KEY] = _services_json(services)
    keep_lists(ledger, lists)


@dataclass(frozen=True)
class KeptLookups:
    """The kept lists a batch's validation can use: the services list (None: never kept), the
    banks of the phones ever looked up, and when the oldest of those used was fetched."""

    services: list[ServiceInfo] | None
    banks: dict[str, list[BankInfo]] = field(default_factory=dict)
    oldest: datetime | None = None

    def told(
        self, not_checked: Sequence[str], phones: Sequence[str], *, speaker: str = THIS_PROCESS
    ) -> list[str]:
        """A report's `not_checked` lines with these lists: `notes` first, and without the
        generic "the services list is unavailable" lines, which the notes say better."""
        if self.services is None:
            not_checked = [note for note in not_checked if NO_SERVICES_LIST not in note]
        return [*self.notes(phones, speaker=speaker), *not_checked]

    def notes(
        self, phones: Sequence[str], now: datetime | None = None, *, speaker: str = THIS_PROCESS
    ) -> list[str]:
        """What the operator is told: whose lists these are and how old, and what waits."""
        said = f"{speaker}: "
        if self.oldest is not None:
            from payflow.ledger import utc_now

            age = age_text((now or utc_now()) - self.oldest)
            said += f"checked with the lists a paying process fetched, the oldest {age} ago"
        else:
            said += "no paying process has kept the service's lists in this ledger yet"
        notes = [said]
        if self.services is None:
            notes.append(
                "serviceId, paymentType and currency: no services list kept: the paying process "
                "checks every row before sending"
            )
        new_phones = [phone for phone in phones if phone not in self.banks]
        if new_phones:
            notes.append(
                f"SBP banks of {counted(len(new_phones), 'phone')} never looked up: the paying "
                "process checks their rows before sending"
            )
        return notes


def kept_banks(kept: KeptLookups) -> BanksForPhones:
    """A `banks_for_phones` answering with the kept lists: a phone never looked up is left
    out, and validation leaves its row to the paying process (`resolve_sbp_banks`)."""

    def lookup(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
        return {phone: kept.banks[phone] for phone in phones if phone in kept.banks}

    return lookup


def kept_lookups(ledger: Ledger, phones: Sequence[str]) -> KeptLookups:
    """The kept services list and the kept banks of each of `phones` that was looked up."""
    from payflow.ledger.kept_lists import BANKS_PREFIX, SERVICES_KEY, kept_lists

    keys = [SERVICES_KEY, *(BANKS_PREFIX + phone for phone in phones)]
    kept = kept_lists(ledger, keys)
    services = None
    if SERVICES_KEY in kept:
        services = [ServiceInfo(i, t, c) for i, t, c in json.loads(kept[SERVICES_KEY].body)]
    banks = {
        key.removeprefix(BANKS_PREFIX): [BankInfo(i, n) for i, n in json.loads(item.body)]
        for key, item in kept.items()
        if key.startswith(BANKS_PREFIX)
    }
    oldest = min((item.fetched_at for item in kept.values()), default=None)
    return KeptLookups(services, banks, oldest)


def age_text(age: timedelta) -> str:
    """An age in the largest whole unit: "under a minute", "5 minutes", "3 hours", "2 days"."""
    seconds = max(0, int(age.total_seconds()))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            return counted(seconds // size, unit)
    return "under a minute"
