"""Refunds and payout links move money out too: over the ledger's policy limits a maker alone
moves nothing, the maker never approves their own batch, and after a checker's approval the
batch moves exactly once (issue 35).

Real `payflow` processes against a standalone sandbox standing in for the payments API, and a
real claims server over HTTP; the sandbox's own counters prove what was refunded or paid.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_support import payflow_env, run_payflow
from pydantic import SecretStr
from support.operators import as_person, ledger_url_of
from support.stats import sandbox_stats

from payflow.api import PayoutsClient
from payflow.approvals import record_decision
from payflow.ledger import Ledger
from payflow.links.server import CLAIM_RETRY, ClaimsServer
from payflow.links.store import LinkStore

# The links tests' helpers: a links file, its claims file, the widget used over HTTP.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "links"))
from links_support import pay_through_widget, read_claims, write_links_file

# RUB under the shipped policy: up to 100000 goes at once, above it needs one checker.
OVER_LIMIT_ROW = "150000.00"


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("prefect-home")


@pytest.fixture
def api(make_sandbox):  # type: ignore[no-untyped-def]
    return make_sandbox()


@pytest.fixture
def env(tmp_path: Path, prefect_home: Path, api) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The environment against the standalone sandbox (an API: real money, to payflow)."""
    return payflow_env(
        tmp_path / "home",
        prefect_home,
        signed_in=None,
        PAYFLOW_API_URL=api.url,
        PAYFLOW_API_TOKEN=api.token,
    )


def _json(done: subprocess.CompletedProcess[str], *codes: int) -> dict[str, Any]:
    assert done.returncode in (codes or (0,)), done.stdout + done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def _paid_orders(api_url: str, count: int, amount: str) -> list[str]:
    """COMPLETED orders made through the sandbox's test route (each credits the balance)."""
    body = {"count": count, "amount": amount, "currency": "RUB"}
    response = httpx.post(f"{api_url}/_sandbox/orders/bulk", json=body, timeout=30)
    response.raise_for_status()
    ids: list[str] = response.json()["ids"]
    return ids


def _refund_file(path: Path, orders: list[str]) -> Path:
    lines = ["orderId,externalId"] + [f"{order},rf-big-{n}" for n, order in enumerate(orders, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.timeout(900)  # eight runs of payflow, each starting Prefect's flow engine
def test_a_refund_batch_over_the_limit_waits_for_a_checker_then_refunds_once(
    tmp_path: Path, env: dict[str, str], api
) -> None:  # type: ignore[no-untyped-def]
    refunds = _refund_file(tmp_path / "refunds.csv", _paid_orders(api.url, 3, OVER_LIMIT_ROW))
    # olga is a maker and a checker; her environment names another person, which counts for
    # nothing against an API.
    olga = {**as_person(env, "olga", "maker,checker"), "PAYFLOW_USER": "petr"}

    waiting = run_payflow(["refund", str(refunds), "--yes"], olga, tmp_path)
    assert waiting.returncode == 1, waiting.stderr
    batch_id = waiting.stdout.split()[2].rstrip(":")
    assert waiting.stdout.splitlines()[:2] == [
        f"refund batch {batch_id}: 3 rows registered",
        "  to refund: 3 refunds, 450000.00 RUB",
    ]
    assert (
        f"nothing was refunded: batch {batch_id} is waiting for approval by 1 person, never its "
        f"maker: `payflow approve {batch_id}`; then `payflow refund {refunds} --yes` again sends it"
    ) in waiting.stderr

    own = run_payflow(["approve", batch_id], olga, tmp_path)
    assert own.returncode == 2 and f"olga made batch {batch_id} and cannot approve it" in own.stderr
    unsigned = {**olga, "PAYFLOW_HOME": str(tmp_path / "nobody")}  # PAYFLOW_USER=petr, no login
    nobody = run_payflow(["approve", batch_id], unsigned, tmp_path)
    assert nobody.returncode == 2 and "not signed in" in nobody.stderr
    stats = sandbox_stats(api.url)
    assert stats["refunds"] == [] and stats["refundCreateAttempts"] == {}

    listed = run_payflow(["status"], olga, tmp_path).stdout
    assert "(refunds): 3 not sent yet; waiting for approval by 1 person" in listed, listed

    petr = as_person(env, "petr", "checker")
    approved = run_payflow(["approve", batch_id], petr, tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert f"approved by petr; batch {batch_id} is now Approved" in approved.stdout
    assert approved.stdout.splitlines()[1].split() == ["RUB", "3", "refunds", "450000.00"]
    assert "nothing is refunded yet: `payflow refund refunds.csv --yes` (its file)" in (
        approved.stdout
    )

    paid = _json(run_payflow(["refund", str(refunds), "--yes", "--json"], olga, tmp_path))
    assert paid["statuses"] == {"COMPLETED": 3}
    stats = sandbox_stats(api.url)
    assert stats["refundsByExternalId"] == {f"rf-big-{n}": 1 for n in (1, 2, 3)}
    assert stats["refundCreateAttempts"] == {f"rf-big-{n}": 1 for n in (1, 2, 3)}
    shown = _json(run_payflow(["status", batch_id, "--json"], olga, tmp_path))
    assert shown["approval"] == {
        "state": "Approved",
        "steps_left": 0,
        "approved_by": ["petr"],
        "declined_by": None,
    }


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_links_batch_over_the_limit_gets_no_claim_url_before_a_checker_approves(
    tmp_path: Path, env: dict[str, str], api
) -> None:  # type: ignore[no-untyped-def]
    rows = [(f"big-link-{n}", f"u{n}", OVER_LIMIT_ROW, "") for n in (1, 2)]
    links = write_links_file(tmp_path / "links.csv", rows)
    out = tmp_path / "out"
    olga = {**as_person(env, "olga", "maker,checker"), "PAYFLOW_USER": "petr"}

    issued = _json(
        run_payflow(["links", str(links), "--out", str(out), "--json"], olga, tmp_path), 1
    )
    batch_id = issued["batch_id"]
    assert issued["claims_issued"] == 0 and issued["claims_file"] is None
    assert issued["waiting_for_approvals"] == 1
    assert f"`payflow approve {batch_id}`" in issued["not_issued"]
    assert not list(out.glob("*claims*"))  # no claim URL written anywhere
    refused = _json(
        run_payflow(["links", "--reissue", batch_id, "--out", str(out), "--json"], olga, tmp_path),
        1,
    )
    assert refused["claims_issued"] == 0 and not list(out.glob("*claims*"))
    own = run_payflow(["approve", batch_id], olga, tmp_path)
    assert own.returncode == 2 and f"olga made batch {batch_id} and cannot approve it" in own.stderr
    assert sandbox_stats(api.url)["payouts"] == []

    petr = as_person(env, "petr", "checker")
    approved = run_payflow(["approve", batch_id], petr, tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert f"`payflow links --reissue {batch_id}` writes them" in approved.stdout
    written = _json(
        run_payflow(["links", "--reissue", batch_id, "--out", str(out), "--json"], olga, tmp_path)
    )
    assert written["claims_issued"] == 2
    claims = read_claims(Path(written["claims_file"]))
    shown = run_payflow(["status", batch_id], olga, tmp_path).stdout
    assert "approved by petr" in shown, shown

    with (
        Ledger.open(ledger_url_of(olga)) as ledger,
        _claims_server(ledger, api) as server,
        httpx.Client(base_url=server.url, timeout=30) as device,  # the recipient's browser
    ):
        for url in claims.values():
            token = url.rsplit("/", 1)[1]
            opened = device.get(f"/claim/{token}", follow_redirects=False)
            assert opened.status_code == 303, opened.text
            pay_through_widget(opened.headers["location"])
            again = device.get(f"/claim/{token}")  # opened again: the payout's state, no second
            assert again.status_code == 200 and "Выплата" in again.text
    assert sandbox_stats(api.url)["payoutsByExternalId"] == {"big-link-1": 1, "big-link-2": 1}


def test_a_claim_of_a_declined_links_batch_pays_nobody(
    tmp_path: Path, env: dict[str, str], api
) -> None:  # type: ignore[no-untyped-def]
    # Under the limits the claims are written at once; a checker then declines the batch before
    # anyone claimed: the claims server reads the ledger's record, and mints no widget link.
    links = write_links_file(tmp_path / "small.csv", [("small-link-1", "u1", "1500", "")])
    out = tmp_path / "out"
    olga = as_person(env, "olga", "maker")
    issued = _json(run_payflow(["links", str(links), "--out", str(out), "--json"], olga, tmp_path))
    assert issued["claims_issued"] == 1
    token = read_claims(Path(issued["claims_file"]))["small-link-1"].rsplit("/", 1)[1]
    with Ledger.open(ledger_url_of(olga)) as ledger:
        record_decision(ledger, issued["batch_id"], approver="petr", decision="decline")
        with _claims_server(ledger, api) as server:
            opened = httpx.get(f"{server.url}/claim/{token}", follow_redirects=False, timeout=30)
    assert opened.status_code == 403 and "Выплата не выполнена" in opened.text
    assert sandbox_stats(api.url)["payouts"] == []


@contextmanager
def _claims_server(ledger: Ledger, api) -> Iterator[ClaimsServer]:  # type: ignore[no-untyped-def]
    """`payflow links serve`'s app on a free port over the ledger, against the sandbox."""
    with (
        PayoutsClient(api.token, base_url=api.url, retry=CLAIM_RETRY) as client,
        ClaimsServer(LinkStore(ledger.engine), client, SecretStr(api.token), api.url) as server,
    ):
        yield server
