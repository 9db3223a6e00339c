"""A console of makers and checkers holding no PAYFLOW_API_TOKEN (issue 35, docs/multi-user.md).

A standalone sandbox stands in for the payments API. A paying process with the token once
fetched the service's lists, kept in the ledger; the console, without the token, takes an upload
with those lists, marks the rows they cannot check, lets a checker approve, and serves the batch
and its report: the sandbox's counters prove it asked the service nothing and paid nothing.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from console_support import Console, csrf_of, signed_in, start_console
from pydantic import SecretStr
from support.stats import sandbox_stats

from payflow.api import AsyncPayoutsClient
from payflow.intake.kept import keep_fetched
from payflow.intake.lookups import fetch_lookups
from payflow.ledger.kept_lists import unchecked_rows
from payflow.sandbox import SandboxServer

SBERBANK = "100000000111"  # the sandbox's id of "Сбербанк"
LOOKED_UP = "79001230001"  # the phone the paying process looked up
HEADER = "externalId,amount,currency,paymentType,requisites,name,userId,bankName\n"
ROWS = [
    f"sbp-1,500,RUB,SBP,{LOOKED_UP},Anna Petrova,u-1,{SBERBANK}",
    f"sbp-2,600,RUB,SBP,{LOOKED_UP},Vera Ivanova,u-2,Bank of Nowhere",
    f"sbp-3,700,RUB,SBP,79001230006,Lena Popova,u-3,{SBERBANK}",  # never looked up
    "sim-1,1000,XOF,SIM,2250700000001,Awa Kone,u-4,",
]


@pytest.fixture
def api(make_sandbox: object) -> SandboxServer:
    """The standalone sandbox standing in for the payments API."""
    started: SandboxServer = make_sandbox()  # type: ignore[operator]
    return started


@pytest.fixture
def tokenless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api: SandboxServer
) -> Iterator[Console]:
    """A console against `api` (not the embedded sandbox) with no PAYFLOW_API_TOKEN."""
    monkeypatch.delenv("PAYFLOW_API_TOKEN", raising=False)
    monkeypatch.setenv("PAYFLOW_API_URL", api.url)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", f"sqlite:///{tmp_path / 'ledger.db'}")
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    started = start_console(tmp_path, api.url, sandbox=False)
    yield started
    started.server.stop()
    started.ctx.ledger.close()


def _kept_by_the_paying_process(console: Console, api: SandboxServer) -> None:
    """What a paying process with the token does at its intake: fetch the lists, keep them."""

    async def fetch() -> None:
        async with AsyncPayoutsClient(SecretStr(api.token), base_url=api.url) as client:
            found = await fetch_lookups(client, [LOOKED_UP])
        keep_fetched(console.ctx.ledger, found.services, found.banks)

    asyncio.run(fetch())


def test_console_without_the_token_takes_an_upload_with_the_kept_lists_and_pays_nothing(
    tokenless: Console, api: SandboxServer
) -> None:
    assert tokenless.ctx.settings.api_token is None and not tokenless.ctx.target.sandbox
    _kept_by_the_paying_process(tokenless, api)
    before = sandbox_stats(api)

    maker = signed_in(tokenless, "mia")
    token = csrf_of(maker.get("/upload").text)
    data = (HEADER + "\n".join(ROWS) + "\n").encode()
    posted = maker.post("/upload", files={"file": ("march.csv", data)}, data={"csrf": token})
    assert posted.status_code == 303, posted.text
    page = maker.get(posted.headers["location"])
    assert page.status_code == 200, page.text
    found = re.search(r'action="/batches/([0-9a-f]+)/submit"', page.text)
    assert found, page.text
    batch_id = found.group(1)
    text = re.sub(r"\s+", " ", page.text)
    assert "This console holds no API token (only the paying process does): checked with " in text
    assert "the lists a paying process fetched, the oldest under a minute ago" in text
    assert "SBP banks of 1 phone never looked up: the paying process checks their rows" in text
    assert "Row 4: the paying process checks the SBP bank before anything is sent" in text
    assert "Bank of Nowhere" in text  # rejected with the kept banks of a phone looked up
    ledger = tokenless.ctx.ledger
    assert unchecked_rows(ledger, batch_id) == {"sbp-3": "bank"}
    assert ledger.batch_counts(batch_id).to_send == 3

    # Submitted and approved here; the paying process pays it, the console says so.
    submitted = maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page.text)})
    assert submitted.status_code == 303, submitted.text
    checker = signed_in(tokenless, "carl")
    form = checker.get(f"/batches/{batch_id}/approve")
    assert form.status_code == 200, form.text
    approved = checker.post(
        f"/batches/{batch_id}/approve", data={"csrf": csrf_of(form.text), "decision": "approve"}
    )
    assert approved.status_code == 303, approved.text
    batch = checker.get(f"/batches/{batch_id}")
    assert batch.status_code == 200, batch.text
    assert "approved, waiting for its payout run" in batch.text
    assert "this console holds no payments API token, so it pays nothing" in batch.text
    assert "/go-on" not in batch.text  # a run here would pay nothing: none is offered
    assert f"payflow pay {batch_id}" in batch.text
    for path in ("/batches", f"/batches/{batch_id}/report.csv", f"/batches/{batch_id}/rejects.csv"):
        assert checker.get(path).status_code == 200, path

    after = sandbox_stats(api)
    assert after["bankLookups"] == before["bankLookups"]  # the kept lists only
    assert after["createAttempts"] == {} and after["payouts"] == []
    assert after["balanceReads"] == before["balanceReads"]
