"""Whether a batch's pay run is alive, read from the ledger's heartbeats: the same answer in
every console, for runs in a console, a Prefect worker or a shell."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from console_support import (
    Console,
    csrf_of,
    paying_in_a_console,
    register_rows,
    signed_in,
)
from reused_hashes import one_hash_per_password  # noqa: F401  (see its module)
from support.beats import at_past, dead_run_id, elsewhere_run_id
from support.operators import set_ledger_policy

from payflow.approvals import record_decision
from payflow.console.paying import IN_PROCESS, is_paying
from payflow.ledger.actions import last_action
from payflow.ledger.run_beats import batch_beats, beat
from payflow.paying.heartbeat import beating

WORKER = "flow run calm-owl"


def _state(html: str) -> str:
    found = re.search(r'id="state"[^>]*>([^<]+)<', html)
    assert found, "no state on the page"
    return found.group(1)


def test_a_deployment_run_whose_worker_died_reads_interrupted_and_a_checker_may_go_on(
    console: Console,
) -> None:
    # Found by use: a run started through the deployment whose worker then died read "paying"
    # forever (Prefect too shows it Running), with no way on from the console.
    ledger = console.ctx.ledger
    batch_id = paying_in_a_console(console, "dead-worker.csv", "dw", run=WORKER, ago=300)
    beat(at_past(ledger, 240), elsewhere_run_id(), batch_id, WORKER)  # then it went silent

    checker = signed_in(console, "carl")
    page = checker.get(f"/batches/{batch_id}").text
    assert _state(page) == "interrupted"
    assert re.search(
        r"flow run calm-owl was last heard from at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page
    ), page
    assert "Left: 5 rows not sent yet." in page and 'id="go-on-form"' in page


@pytest.mark.parametrize("run", [IN_PROCESS, WORKER])
def test_a_run_beating_in_a_worker_or_another_console_reads_paying_and_is_not_gone_on_with(
    console: Console, run: str
) -> None:
    # Found by use: two consoles on one ledger each read the other's running pay run as
    # "interrupted" and offered "Go on paying" (a run known alive only in its own process).
    ledger = console.ctx.ledger
    checker = signed_in(console, "carl")
    batch_id = paying_in_a_console(console, "other.csv", "ot", run=run, ago=120)
    beat(ledger, elsewhere_run_id(), batch_id, run)  # beating now, in another process
    page = checker.get(f"/batches/{batch_id}").text
    assert _state(page) == "paying"
    assert 'id="go-on-form"' not in page
    went_on = checker.post(f"/batches/{batch_id}/go-on", data={"csrf": csrf_of(page)})
    assert went_on.status_code == 409 and "no stopped payout run" in went_on.text
    assert checker.get(f"/batches/{batch_id}/progress.json").json()["running"] is True


def test_a_run_whose_process_is_gone_from_this_host_reads_interrupted_at_once(
    console: Console,
) -> None:
    batch_id = paying_in_a_console(console, "killed.csv", "kd", run=WORKER)
    beat(console.ctx.ledger, dead_run_id(), batch_id, WORKER)  # a fresh beat, its pid gone
    page = signed_in(console, "carl").get(f"/batches/{batch_id}").text
    assert _state(page) == "interrupted" and 'id="go-on-form"' in page


def test_a_deployment_run_that_never_beat_waits_for_a_worker(console: Console) -> None:
    # Only Prefect knows whether a worker will take it: not judged dead, nothing offered.
    batch_id = paying_in_a_console(console, "queued.csv", "qd", run=WORKER, ago=600)
    page = signed_in(console, "carl").get(f"/batches/{batch_id}").text
    assert _state(page) == "paying" and 'id="go-on-form"' not in page


def test_a_console_run_that_never_beat_is_gone_after_a_minute_not_before(
    console: Console,
) -> None:
    checker = signed_in(console, "carl")
    batch_id = paying_in_a_console(console, "young.csv", "yg", ago=5)
    assert _state(checker.get(f"/batches/{batch_id}").text) == "paying"
    console.ctx.ledger = at_past(console.ctx.ledger, -120)  # the console reads two minutes on
    assert _state(checker.get(f"/batches/{batch_id}").text) == "interrupted"


def test_a_run_from_the_command_line_reads_paying_while_it_beats_then_not(
    console: Console,
) -> None:
    # A batch being paid with `payflow pay` (no console action) read "uploaded" meanwhile.
    ledger = console.ctx.ledger
    batch_id = register_rows(ledger, "shellpaid", "sh-2", "sh-3")
    maker = signed_in(console, "mia")
    with beating(ledger, batch_id, "flow run quick-fox", every=0.05) as run_id:
        listed = maker.get("/batches").text.split(f"/batches/{batch_id}", 1)[1]
        assert re.search(r'class="state s-paying">paying<', listed)
        assert _state(maker.get(f"/batches/{batch_id}").text) == "paying"
    ended = [b for b in batch_beats(ledger, batch_id) if b.run_id == run_id]
    assert ended and ended[0].ended_at is not None
    assert _state(maker.get(f"/batches/{batch_id}").text) == "uploaded"


def _one_step_for_every_batch(console: Console, tmp_path) -> Path:
    """Approval rules asking one step of every batch, as the console's settings; their file."""
    rules = tmp_path / "approvals.yaml"
    rules.write_text('currencies:\n  "*":\n    bands:\n      - {steps: 1}\n', encoding="utf-8")
    set_ledger_policy(console.ctx.ledger, rules)  # the policy is ledger data
    return rules


def test_a_deployment_run_beating_while_it_waits_for_its_approval_reads_awaiting_approval(
    console: Console, tmp_path
) -> None:
    # Found in review: a daily run paused for its approval beats (for hours), and every console
    # read its batch as "paying" while nothing was being paid.
    _one_step_for_every_batch(console, tmp_path)
    ledger = console.ctx.ledger
    batch_id = register_rows(ledger, "pausedrun", "pr-2", "pr-3")
    maker = signed_in(console, "mia")
    with beating(ledger, batch_id, "flow run patient-owl", every=0.05):
        assert _state(maker.get(f"/batches/{batch_id}").text) == "awaiting approval"
        record_decision(ledger, batch_id, approver="bob", decision="approve")
        assert _state(maker.get(f"/batches/{batch_id}").text) == "paying"  # approved: it pays


def test_approving_beside_a_deployment_run_waiting_for_it_starts_no_run_here_and_says_so(
    console: Console, tmp_path
) -> None:
    # Found in review: a console with no Prefect server set paid the batch in its own process
    # beside the daily run paused for the same approval, which then woke to a second run; and
    # after such a refusal the page offered "Approve and pay" again, refused as already decided.
    _one_step_for_every_batch(console, tmp_path)
    ledger = console.ctx.ledger
    batch_id = register_rows(ledger, "besidepaused", "bp-2", "bp-3")
    checker = signed_in(console, "carl")
    with beating(ledger, batch_id, "flow run patient-owl", every=0.05):
        # A deployed run's batch has no signed-in maker: a maker submits it before any checker
        # may approve it (the run's OS name or parameter names nobody).
        maker = signed_in(console, "mia")
        page = maker.get(f"/batches/{batch_id}").text
        assert maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)}).is_redirect
        form = checker.get(f"/batches/{batch_id}/approve").text
        answered = checker.post(
            f"/batches/{batch_id}/approve", data={"csrf": csrf_of(form), "decision": "approve"}
        )
        assert answered.is_redirect
        page = checker.get(f"/batches/{batch_id}").text
        assert not is_paying(batch_id)  # nothing started in this process
        assert _state(page) == "approved, waiting for its payout run"
        told = "flow run patient-owl of this batch runs outside this console"
        assert page.count(told) == 2  # the page's note and the history, not the notice too
        assert "Review and approve" not in page and 'id="go-on-form"' not in page
        form = checker.get(f"/batches/{batch_id}/approve").text
        assert "Approve and pay" not in form and "Nothing to decide" in form
        assert ledger.batch_counts(batch_id).to_send == 2
    # Its run stopped beating without being answered: a checker may go on with the approval.
    page = checker.get(f"/batches/{batch_id}").text
    assert _state(page) == "interrupted" and 'id="go-on-form"' in page


def test_an_interrupted_batch_that_sent_nothing_offers_no_reconcile(console: Console) -> None:
    # Found by use: "Reconcile now" stood under an interrupted batch whose run sent no row, and
    # pressing it said "5 payouts fetched again" of rows never sent: nothing to reconcile.
    batch_id = paying_in_a_console(console, "unsent.csv", "us", run=WORKER)
    beat(console.ctx.ledger, dead_run_id(), batch_id, WORKER)  # its process gone, nothing sent
    checker = signed_in(console, "carl")
    page = checker.get(f"/batches/{batch_id}").text
    assert _state(page) == "interrupted" and 'id="go-on-form"' in page
    assert 'id="reconcile-form"' not in page
    # A page read before, or a script, is told why, and nothing is fetched or recorded.
    refused = checker.post(f"/batches/{batch_id}/reconcile", data={"csrf": csrf_of(page)})
    assert refused.status_code == 409
    assert "no row of this batch was sent" in refused.text
    assert last_action(console.ctx.ledger, batch_id, "reconciled") is None


def test_a_console_pay_run_sends_no_prefect_heartbeats_to_the_consoles_own_server(
    console: Console, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its Prefect server is one the console started, as a command's own: each pay run's end
    # waited up to a second for Prefect's heartbeat thread, whose beats nothing read (the
    # console reads the ledger's heartbeats, above).
    from prefect.settings import (
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        get_current_settings,
        temporary_settings,
    )

    import payflow.flows.pay_batch as pay_batch_flow
    from payflow.console.paying import _pay_here

    seen: list[object] = []

    def pay_batch(*args: object, **kwargs: object) -> None:
        seen.append(get_current_settings().flows.heartbeat_frequency)
        raise RuntimeError("stopped by the test before paying")

    monkeypatch.setattr(pay_batch_flow, "pay_batch", pay_batch)
    console.ctx.prefect_api_url = "http://127.0.0.1:9/api"  # never asked: the flow is the test's
    batch_id = register_rows(console.ctx.ledger, "hb", "hb-1")
    with temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: 30}):  # Prefect's default
        _pay_here(console.ctx, batch_id, "carl")
    assert seen == [None]
    ended = last_action(console.ctx.ledger, batch_id, "pay_failed")
    assert ended is not None and ended.detail == "RuntimeError: stopped by the test before paying"
