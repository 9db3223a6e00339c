"""The keep-checking flows: reconcile-recent finds a correction made after the run ended (and
ends red in Prefect), and reconcile-pending follows a payout that was still open and refreshes
its report."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from reconcile_support import instruction, new_id, pay, payout_id, register
from support.stats import sandbox_stats, set_faults

from payflow.api import AsyncPayoutsClient
from payflow.flows.reconcile import reconcile_outcomes, reconcile_pending, reconcile_recent
from payflow.ledger import Ledger
from payflow.ledger.actions import actions_of
from payflow.tasks.reconcile_batch import artifact_key


def _paid_batch(ledger_url: str, sandbox, last4: str, rows: int = 1) -> tuple[str, str]:
    """Pay `rows` rows (two requests in flight at most); the batch and its row 2's payout id."""

    async def run() -> str:
        with Ledger.open(ledger_url) as ledger:
            paid = [instruction(new_id("flow"), n, last4) for n in range(2, rows + 2)]
            batch_id = register(ledger, paid)
            async with AsyncPayoutsClient(
                sandbox.token, base_url=sandbox.url, max_in_flight=2
            ) as client:
                await pay(client, ledger, batch_id)
            return batch_id

    batch_id = asyncio.run(run())
    with Ledger.open(ledger_url) as ledger:
        return batch_id, payout_id(ledger, batch_id, 2)


@pytest.fixture
def home(tmp_path: Path, make_sandbox, monkeypatch):
    sandbox = make_sandbox()
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    monkeypatch.setenv("PAYFLOW_API_URL", sandbox.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", sandbox.token)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", ledger_url)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    return sandbox, ledger_url, tmp_path / "reports"


def test_reconcile_recent_finds_a_correction_after_the_run(prefect_api, home) -> None:
    sandbox, ledger_url, reports = home
    batch_id, payout_id = _paid_batch(ledger_url, sandbox, "0001")
    with Ledger.open(ledger_url) as ledger:
        assert ledger.batch_summary(batch_id) == {"COMPLETED": 1}
    httpx.post(
        f"{sandbox.url}/_sandbox/payouts/{payout_id}/status",
        json={"status": "FAILED", "statusMessage": "Corrected by the platform"},
    ).raise_for_status()

    state = reconcile_recent(out_dir=str(reports), return_state=True)

    outcomes = reconcile_outcomes(state)
    assert [o.batch_id for o in outcomes] == [batch_id]
    with Ledger.open(ledger_url) as ledger:
        kinds = {f.kind for f in ledger.findings(batch_id) if f.state == "open"}
        assert kinds == {"corrected_after_completion"}
        assert next(ledger.batch_rows(batch_id)).corrected
    assert Path(outcomes[0].report_xlsx).is_file()
    # A payout reported paid that was not: the scheduled run is red, as `payflow reconcile`
    # exits 1, and says which batch to look at (it read Completed).
    assert state.is_failed()
    assert state.name == "Open findings"
    assert state.message == (
        f"1 batch to look at: {batch_id} 1 open finding, 1 payout corrected after completion"
        " (payflow findings BATCH_ID lists them)"
    )


def test_reconcile_pending_follows_an_open_payout(prefect_api, home) -> None:
    sandbox, ledger_url, reports = home
    batch_id, payout_id = _paid_batch(ledger_url, sandbox, "5555")  # stays PROCESSING
    httpx.post(
        f"{sandbox.url}/_sandbox/payouts/{payout_id}/status", json={"status": "COMPLETED"}
    ).raise_for_status()

    state = reconcile_pending(out_dir=str(reports), return_state=True)

    assert state.is_completed()  # nothing left open: the run stays green
    outcomes = reconcile_outcomes(state)
    assert [o.batch_id for o in outcomes] == [batch_id]
    with Ledger.open(ledger_url) as ledger:
        assert ledger.batch_summary(batch_id) == {"COMPLETED": 1}
        # A schedule's act, under its own name: never this worker's OS account as a person.
        acts = [(a.actor, a.action) for a in actions_of(ledger, batch_id)]
        assert acts == [("deployment reconcile-pending", "reconciled")]
        assert [v.made_by for v in ledger.report_versions(batch_id)] == [
            "deployment reconcile-pending"
        ]
    assert Path(outcomes[0].report_csv).read_text(encoding="utf-8").count("\n") == 2
    # The same history as the console's batch page and `payflow status --history`, in Prefect.
    history = _artifact(artifact_key("history", batch_id))
    assert "| deployment reconcile-pending | reconciled | 1 payout fetched, 1 row moved" in history


def test_a_scheduled_run_fetches_as_many_at_once_as_its_own_setting_says(
    prefect_api, home, monkeypatch
) -> None:
    sandbox, ledger_url, reports = home
    batch_id, _ = _paid_batch(ledger_url, sandbox, "0001", rows=8)
    paid = sandbox_stats(sandbox)
    assert paid["peakRequestsInFlight"] <= 2
    monkeypatch.setenv("PAYFLOW_MAX_IN_FLIGHT", "2")
    monkeypatch.setenv("PAYFLOW_RECONCILE_CONCURRENCY", "4")
    set_faults(sandbox, latency=0.3)  # every fetch waits: the slots fill before one answers

    state = reconcile_pending(out_dir=str(reports), return_state=True)

    assert state.is_completed()
    assert [o.batch_id for o in reconcile_outcomes(state)] == [batch_id]
    stats = sandbox_stats(sandbox)
    assert stats["payoutReads"] - paid["payoutReads"] == 8
    assert stats["peakRequestsInFlight"] == 4


def _artifact(key: str) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    async def read() -> str:
        async with get_client() as client:
            found = await client.read_latest_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))
            )
        assert found, key
        return str(found[0].data)

    return asyncio.run(read())


def test_reconcile_pending_never_calls_rows_left_by_a_killed_run_nothing_to_look_at(
    prefect_api, home
) -> None:
    # A SIGKILLed run left 166 rows SUBMITTING (never sent) and the scheduled run ended
    # Completed with "1 batch reconciled: nothing to look at".
    _, ledger_url, reports = home
    with Ledger.open(ledger_url) as ledger:
        rows = [instruction(new_id("killed"), n, "0001") for n in (2, 3, 4)]
        batch_id = register(ledger, rows)
        assert len(ledger.claim_for_submit(batch_id, "gone-host:1:dead", 2)) == 2

    state = reconcile_pending(out_dir=str(reports), return_state=True)

    assert state.is_failed() and state.name == "Open findings"
    [outcome] = reconcile_outcomes(state)
    assert (outcome.unsent, outcome.unconfirmed) == (3, 0)
    assert state.message == (
        f"1 batch to look at: {batch_id} 3 rows not sent yet"
        " (payflow status BATCH_ID says what comes next)"
    )
