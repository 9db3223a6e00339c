"""Helpers for the links tests: a settable clock, a links file, the widget used over HTTP."""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from widget_support import requisites


class Clock:
    """Now, moved by hand; every call also ticks one second so minted links differ."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def write_links_file(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    """A links CSV: externalId, userId, amount, serviceId."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["externalId", "userId", "amount", "serviceId"])
        writer.writerows(rows)
    return path


def read_claims(path: Path) -> dict[str, str]:
    """externalId -> claim URL from a claims file."""
    with path.open(encoding="utf-8-sig") as handle:
        return {row["externalId"]: row["claimUrl"] for row in csv.DictReader(handle)}


def query_of(link: str) -> dict[str, str]:
    """`{"payload", "signature"}` of a signed widget link."""
    return {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}


def pay_through_widget(widget_link: str, last4: str = "0042") -> dict:
    """What a recipient does on first visit: save details, then the payout is created."""
    base = widget_link.split("/payout-widget", 1)[0]
    query = query_of(widget_link)
    with httpx.Client(base_url=base) as http:
        saved = http.post(
            "/payout-widget/requisites", json={**query, "requisites": requisites(last4)}
        )
        assert saved.status_code in (200, 409), saved.text
        return http.post("/payout-widget/payout", json=query).json()
