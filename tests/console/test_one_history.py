"""One history for every surface (issue 35): a batch made in the console, approved on the command
line and paid by `payflow pay` reads the same in the console as in `payflow status`.

It read "awaiting approval ... nothing is paid until a checker here chooses Approve and pay"
beside "COMPLETED 3". Real processes: the console serving here, `payflow approve` and `payflow
pay` as subprocesses, a standalone sandbox standing in for the payments API.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli.cli_support import payflow_env, run_payflow
from console_support import csrf_of, signed_in, start_console, upload_clean
from support.operators import as_person
from support.stats import sandbox_stats

from payflow.acts.auth import redeem_code

pytestmark = pytest.mark.timeout(600)


def test_a_console_batch_approved_and_paid_on_the_command_line_reads_paid_in_the_console(
    tmp_path: Path, make_sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = make_sandbox()
    ledger_url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("PAYFLOW_API_URL", api.url)
    monkeypatch.setenv("PAYFLOW_API_TOKEN", api.token)
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", ledger_url)
    console = start_console(tmp_path, api.url, ledger_url=ledger_url, sandbox=False)
    try:
        maker = signed_in(console, "mia")
        batch_id = upload_clean(maker, "june.csv", "hist")
        page = maker.get(f"/batches/{batch_id}").text
        assert maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)}).is_redirect
        assert sandbox_stats(api.url)["createAttempts"] == {}

        env = payflow_env(
            tmp_path / "home",
            tmp_path / "prefect-home",
            signed_in=None,
            PAYFLOW_API_URL=api.url,
            PAYFLOW_API_TOKEN=api.token,
            PAYFLOW_LEDGER_URL=ledger_url,
        )
        # carl, the console's checker, approves on the command line (signed in there).
        approved = run_payflow(["approve", batch_id, "--json"], as_person(env, "carl"), tmp_path)
        assert approved.returncode == 0, approved.stderr
        assert json.loads(approved.stdout)["status"] == "Approved"
        # mia, the maker, pays it from her own shell: who paid is in the one history too.
        paid = run_payflow(["pay", batch_id, "--json"], as_person(env, "mia"), tmp_path)
        assert paid.returncode == 1, paid.stderr  # the clean rows include ones that fail
        statuses = json.loads(paid.stdout)["statuses"]
        status = run_payflow(["status", batch_id, "--json"], env, tmp_path)
        assert json.loads(status.stdout)["statuses"] == statuses

        checker = signed_in(console, "carl")
        shown = checker.get(f"/batches/{batch_id}").text
        state = re.search(r'id="state"[^>]*>([^<]+)<', shown)
        assert state is not None and state.group(1) == "finished with failures", shown
        assert "awaiting approval" not in shown
        assert "nothing is paid until a checker here chooses" not in shown
        # The history names the approval made on the command line, once.
        history = shown.split('id="history"', 1)[1]
        assert history.count("on the command line (payflow approve)") == 1
        assert "<td>mia</td><td>pay started</td><td>on the command line</td>" in history
        assert "<td>mia</td><td>pay finished</td>" in history
        listed = checker.get("/batches").text
        assert (
            "awaiting approval" not in listed.split(f"/batches/{batch_id}", 1)[1].split("</tr>")[0]
        )
    finally:
        console.server.stop()
        console.ctx.ledger.close()


def test_a_checker_gets_a_one_time_code_for_prefects_form_in_the_console(console) -> None:
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, "code.csv", "code")
    page = maker.get(f"/batches/{batch_id}").text
    assert maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)}).is_redirect
    refused = maker.post(f"/batches/{batch_id}/code", data={"csrf": csrf_of(page)})
    assert refused.status_code == 403  # a maker gets no code

    checker = signed_in(console, "carl")
    page = checker.get(f"/batches/{batch_id}").text
    assert 'id="code-form"' in page
    shown = checker.post(
        f"/batches/{batch_id}/code", data={"csrf": csrf_of(page)}, follow_redirects=True
    ).text
    found = re.search(r"approval code for Prefect&#39;s pause form: ([A-Z0-9]+) ", shown)
    assert found, shown
    checker_of_code = redeem_code(console.ctx.ledger, batch_id, found.group(1))
    assert checker_of_code is not None and checker_of_code.name == "carl"
    assert redeem_code(console.ctx.ledger, batch_id, found.group(1)) is None  # once
