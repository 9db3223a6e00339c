"""The rerun-failed flow against a real sandbox and ledger: preview, choice, links, refusals."""

from __future__ import annotations

import asyncio
import json
import secrets
from datetime import timedelta
from decimal import Decimal

import pytest
from prefect import get_client, tags
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from rerun_support import correct_at_service, paid_batch, posts
from sqlalchemy import create_engine, update
from support.postgres import fresh_postgres_database

from payflow.approvals import ApprovalRefused, record_decision
from payflow.approvals.identity import current_user
from payflow.flows.rerun import RerunResult, rerun_failed, rerun_result, summary_lines
from payflow.ledger import Ledger, RowState, utc_now
from payflow.ledger.tables import Batch
from payflow.rerun import RerunRefused, attempt_external_id
from payflow.runtime import ConfigurationError
from payflow.sandbox import SandboxServer
from payflow.settings import Settings


def rerun(sandbox: SandboxServer, ledger: Ledger, batch_id: str, **options) -> RerunResult:
    # As `payflow rerun` runs it: a rerun batch that needs approval waits, it does not pause.
    options.setdefault("wait_for_approval", False)
    state = rerun_failed(
        batch_id=batch_id,
        api_url=sandbox.url,
        sandbox=True,
        ledger_url=ledger.url,
        return_state=True,
        **options,
    )
    return rerun_result(state)


def latest(ledger: Ledger, batch_id: str) -> dict[int, tuple[str, RowState, int]]:
    return {
        v.row_number: (v.external_id, v.state, v.attempt) for v in ledger.latest_attempts(batch_id)
    }


def write_corrections(tmp_path, text: str):
    path = tmp_path / "corrections.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_preview_sends_nothing(prefect_api, sandbox, ledger):
    batch_id = paid_batch(sandbox, ledger, "prev")
    before = posts(sandbox)

    result = rerun(sandbox, ledger, batch_id, all_failed=True)

    assert posts(sandbox) == before
    assert ledger.rerun_batches(batch_id) == []
    text = "\n".join(result.preview)
    assert "4 rows would be sent again" in text
    assert "2 x 'Recipient not found' [fix_details]: 60 XOF" in text
    assert "rows 3, 7" in text
    assert "1 x 'Recipient account is blocked' [do_not_retry]" in text
    assert "not eligible: 1 COMPLETED, 1 PROCESSING" in text
    # Its reader is in Prefect's UI (the rerun-failed deployment's artifact), with no command
    # line: it said "add --reviewed to send them".
    assert text.endswith(
        "nothing was sent; run the deployment again with the same parameters and reviewed: true "
        "to send them"
    )
    assert "--" not in text


def test_a_preview_with_nothing_chosen_names_the_deployments_parameters(
    prefect_api, sandbox, ledger
):
    batch_id = paid_batch(sandbox, ledger, "prev-none")

    preview = rerun(sandbox, ledger, batch_id).preview

    assert preview[-1] == (
        "nothing was sent; choose rows with the parameters rows, message, failure_class or "
        "all_failed, then run the deployment again with reviewed: true"
    )
    with pytest.raises(RerunRefused, match=r"^parameter rows: 'x' is not a row number"):
        rerun(sandbox, ledger, batch_id, rows="x")
    with pytest.raises(RerunRefused, match=r"^parameter failure_class 'oops' is not one of"):
        rerun(sandbox, ledger, batch_id, failure_class="oops")


def test_only_the_chosen_rows_are_rerun_and_linked_to_their_root(
    prefect_api, sandbox, ledger, tmp_path
):
    batch_id = paid_batch(sandbox, ledger, "only")
    fix = write_corrections(tmp_path, "externalId,requisites\nonly-3,2250700030009\n")

    result = rerun(sandbox, ledger, batch_id, rows="3", reviewed=True, corrections=fix)

    new_id = attempt_external_id("only-3", 1)
    assert result.created == [new_id]
    sent = posts(sandbox)
    assert sent[new_id] == 1
    assert "only-7-r1" not in sent and "only-4-r1" not in sent
    assert latest(ledger, batch_id)[3] == (new_id, RowState.COMPLETED, 1)
    assert latest(ledger, batch_id)[7] == ("only-7", RowState.FAILED, 0)
    [rerun_id] = ledger.rerun_batches(batch_id)
    [view] = ledger.latest_attempts(rerun_id)
    assert view.root_external_id == "only-3" and view.external_id == new_id
    # The report counts the root once, by its latest attempt.
    assert result.statuses == {"COMPLETED": 2, "FAILED": 2, "CANCELED": 1, "PROCESSING": 1}
    stored = ledger.payout_instruction(new_id)
    assert stored is not None and stored.requisites == "2250700030009"
    assert stored.amount == ledger.payout_instruction("only-3").amount


def test_a_rerun_whose_rows_are_not_all_paid_ends_failed_as_the_command_exits_1(
    prefect_api, sandbox, ledger
):
    # The deployed rerun-failed run read Completed while the row it sent was CANCELED again
    # (and the batch's other failed rows stayed failed): nobody watching Prefect saw it.
    batch_id = paid_batch(sandbox, ledger, "red", outcomes=("0001", "3333"))
    preview = rerun_failed(
        batch_id=batch_id,
        api_url=sandbox.url,
        sandbox=True,
        ledger_url=ledger.url,
        wait_for_approval=False,
        return_state=True,
    )
    assert preview.is_completed()  # a preview sends nothing and asks nothing of anyone

    state = rerun_failed(
        batch_id=batch_id,
        rows="3",
        reviewed=True,
        api_url=sandbox.url,
        sandbox=True,
        ledger_url=ledger.url,
        wait_for_approval=False,
        return_state=True,
    )

    assert state.is_failed() and state.name == "Not all paid"
    assert state.message == (
        f"1 of 2 rows not paid (CANCELED 1) by latest attempt: payflow status {batch_id}"
    )
    result = rerun_result(state)
    assert result.created == [attempt_external_id("red-3", 1)] and not result.all_paid


def test_the_same_rerun_twice_pays_nothing_more(prefect_api, sandbox, ledger, tmp_path):
    batch_id = paid_batch(sandbox, ledger, "twice")
    fix = write_corrections(
        tmp_path, "externalId,requisites\ntwice-3,2250700030009\ntwice-7,2250700070009\n"
    )
    first = rerun(
        sandbox, ledger, batch_id, message="Recipient not found", reviewed=True, corrections=fix
    )
    assert sorted(first.created) == ["twice-3-r1", "twice-7-r1"]
    after_first = posts(sandbox)

    second = rerun(
        sandbox, ledger, batch_id, message="Recipient not found", reviewed=True, corrections=fix
    )

    assert second.created == [] and second.paid_batches == []
    assert posts(sandbox) == after_first
    with pytest.raises(RerunRefused, match="row 3 is COMPLETED"):
        rerun(sandbox, ledger, batch_id, rows="3", reviewed=True)
    assert posts(sandbox) == after_first


def test_completed_and_pending_rows_are_refused(prefect_api, sandbox, ledger):
    batch_id = paid_batch(sandbox, ledger, "refuse")
    before = posts(sandbox)

    with pytest.raises(RerunRefused, match=r"row 2 is COMPLETED.*row 6 is PROCESSING"):
        rerun(sandbox, ledger, batch_id, rows="2,3,6", reviewed=True)

    assert posts(sandbox) == before
    assert ledger.rerun_batches(batch_id) == []


def test_a_parent_corrected_to_completed_is_dropped(prefect_api, sandbox, ledger):
    batch_id = paid_batch(sandbox, ledger, "drop")
    blocked = next(v for v in ledger.latest_attempts(batch_id) if v.row_number == 4)
    correct_at_service(sandbox, blocked.payout_id, "COMPLETED")

    result = rerun(sandbox, ledger, batch_id, rows="4,5", reviewed=True)

    assert len(result.dropped) == 1 and result.dropped[0].startswith("row 4 (drop-4)")
    assert "now says COMPLETED" in result.dropped[0]
    assert result.created == ["drop-5-r1"]
    sent = posts(sandbox)
    assert "drop-4-r1" not in sent and sent["drop-5-r1"] == 1


def test_corrections_may_not_change_amount_and_are_validated(
    prefect_api, sandbox, ledger, tmp_path
):
    batch_id = paid_batch(sandbox, ledger, "corr")
    before = posts(sandbox)
    amount = write_corrections(
        tmp_path, "externalId,amount,requisites\ncorr-3,999995,2250700030009\n"
    )
    with pytest.raises(RerunRefused, match="cannot change the amount"):
        rerun(sandbox, ledger, batch_id, rows="3", reviewed=True, corrections=amount)
    bad = write_corrections(tmp_path, "externalId,requisites\ncorr-3,+225 07 abc\n")
    with pytest.raises(RerunRefused, match="corr-3: requisites"):
        rerun(sandbox, ledger, batch_id, rows="3", reviewed=True, corrections=bad)
    user = write_corrections(tmp_path, "externalId,userId\ncorr-3,someone-else\n")
    with pytest.raises(RerunRefused, match="not userId"):
        rerun(sandbox, ledger, batch_id, rows="3", reviewed=True, corrections=user)
    assert posts(sandbox) == before
    assert ledger.rerun_batches(batch_id) == []


def test_a_rerun_above_the_limit_waits_for_approval_and_an_expired_one_pays_nothing(
    prefect_api, sandbox, ledger
):
    # 2,000,000 XOF per row: above the shipped rules' 1,000,000 limit, so one approval step.
    batch_id = paid_batch(sandbox, ledger, "big", ("2222", "2222"), amount=Decimal(2_000_000))

    waiting = rerun(sandbox, ledger, batch_id, rows="2", reviewed=True, maker="alice")
    [first_rerun] = ledger.rerun_batches(batch_id)
    assert waiting.created == ["big-2-r1"] and waiting.waiting == {first_rerun: "Pending"}
    assert "big-2-r1" not in posts(sandbox)

    with pytest.raises(ApprovalRefused, match="cannot approve"):
        record_decision(ledger, first_rerun, approver="alice", decision="approve")
    record_decision(ledger, first_rerun, approver="bob", decision="approve")
    paid = rerun(sandbox, ledger, batch_id, rows="2", reviewed=True, maker="alice")
    assert paid.paid_batches == [first_rerun] and posts(sandbox)["big-2-r1"] == 1

    rerun(sandbox, ledger, batch_id, rows="3", reviewed=True, maker="alice")
    second_rerun = ledger.rerun_batches(batch_id)[1]
    engine = create_engine(ledger.url)
    with engine.begin() as connection:  # a day and more passes with nobody approving
        connection.execute(
            update(Batch)
            .where(Batch.batch_id == second_rerun)
            .values(created_at=utc_now() - timedelta(hours=25))
        )
    engine.dispose()

    expired = rerun(sandbox, ledger, batch_id, rows="3", reviewed=True, maker="alice")

    assert expired.waiting == {second_rerun: "Expired"} and expired.paid_batches == []
    assert "big-3-r1" not in posts(sandbox)
    with pytest.raises(ApprovalRefused, match="expired"):
        record_decision(ledger, second_rerun, approver="bob", decision="approve")


def test_a_rerun_whose_maker_names_nobody_is_made_by_the_workers_account_and_says_so(
    prefect_api, sandbox, ledger
):
    # Started from its deployment without `maker`, a rerun is made by the worker's account, as
    # before; its summary (the run's artifact) says that account is not a person.
    batch_id = paid_batch(sandbox, ledger, "nomaker", ("2222",), amount=Decimal(2_000_000))

    blank = rerun(sandbox, ledger, batch_id, all_failed=True, reviewed=True, maker="  ")

    [rerun_id] = ledger.rerun_batches(batch_id)
    account = current_user(Settings())
    facts = ledger.batch_facts(rerun_id)
    assert facts is not None and facts.made_by == account
    assert blank.waiting == {rerun_id: "Pending"}
    said = [line for line in summary_lines(blank) if "not a person" in line]
    assert said == [
        f"  maker recorded as {account}, this worker's account and not a person: a signed-in "
        "maker submits the batch (payflow submit BATCH) before a checker may approve it"
    ]
    named = paid_batch(sandbox, ledger, "named", ("2222",), amount=Decimal(2_000_000))
    result = rerun(sandbox, ledger, named, all_failed=True, reviewed=True, maker="mia")
    facts = ledger.batch_facts(ledger.rerun_batches(named)[0])
    assert facts is not None and facts.made_by == "mia"
    assert not [line for line in summary_lines(result) if "not a person" in line]


def test_a_ledger_password_never_becomes_a_prefect_parameter(
    prefect_api, sandbox, postgres_url, monkeypatch
):
    # The rerun handed its pay-batch subflow the settings' ledger URL whole, so Prefect's
    # database and UI showed the ledger's password among the flow run's parameters.
    with_password = postgres_url.replace("postgres@", "postgres:s3cret-pw@", 1)
    assert "s3cret-pw" in with_password  # trust auth here: the password is carried, not checked
    monkeypatch.setenv("PAYFLOW_LEDGER_URL", with_password)
    # This test's runs, not the others' on the test process's server.
    mine = f"test-{secrets.token_hex(4)}"
    with Ledger.open(with_password) as ledger, tags(mine):
        batch_id = paid_batch(sandbox, ledger, f"pw{secrets.token_hex(3)}")
        result = rerun_result(
            rerun_failed(
                batch_id=batch_id,
                rows="3",
                reviewed=True,
                api_url=sandbox.url,
                sandbox=True,
                wait_for_approval=False,
                return_state=True,
            )
        )
        [rerun_id] = ledger.rerun_batches(batch_id)
        assert result.created

    async def parameters() -> str:
        async with get_client() as client:
            runs = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[mine]))
            )
        return json.dumps([run.parameters for run in runs], default=str)

    seen = asyncio.run(parameters())
    # The runs were read: the rerun's, and its pay-batch subflow's (which pays the rerun batch).
    assert batch_id in seen and rerun_id in seen
    assert "s3cret-pw" not in seen


def test_a_rerun_never_pays_from_another_ledger_than_the_one_it_read(
    prefect_api, sandbox, postgres_url, monkeypatch
):
    # Given a ledger URL with a password, the rerun registered its attempts there and handed
    # its pay-batch subflow no ledger URL (a password is never a parameter): the subflow then
    # paid from PAYFLOW_LEDGER_URL, another ledger, where the rerun batch is not.
    read_from = postgres_url.replace("postgres@", "postgres:s3cret-pw@", 1)
    with fresh_postgres_database("payflow_other") as other:
        configured = other.replace("postgres@", "postgres:other-pw@", 1)
        monkeypatch.setenv("PAYFLOW_LEDGER_URL", configured)
        with Ledger.open(configured):
            pass  # a real, migrated ledger: the one the pay subflow would have read
        with Ledger.open(read_from) as ledger:
            batch_id = paid_batch(sandbox, ledger, f"other{secrets.token_hex(3)}")
            before = posts(sandbox)
            with pytest.raises(ConfigurationError) as refused:
                rerun(sandbox, ledger, batch_id, rows="3", reviewed=True)
            assert ledger.rerun_batches(batch_id) == []
        assert posts(sandbox) == before
    message = str(refused.value)
    assert "holds a password and is not PAYFLOW_LEDGER_URL" in message
    assert "nothing was done" in message
    assert "s3cret-pw" not in message and "other-pw" not in message


def test_the_summary_tells_a_choice_matching_nothing_from_rows_no_longer_failed(
    prefect_api, sandbox, ledger
):
    # A mistyped --message read "no chosen row is still failed", as if the rows had been paid
    # since; and a rerun batch whose payouts failed again read "paid rerun batch".
    batch_id = paid_batch(sandbox, ledger, "words")
    typo = rerun(sandbox, ledger, batch_id, message="Recipient not fund", reviewed=True)
    assert "  nothing to send: no failed row matches the choice; nothing was sent" in (
        summary_lines(typo)
    )
    again = rerun(sandbox, ledger, batch_id, rows="3", reviewed=True)  # not found, sent again
    [rerun_id] = again.paid_batches
    lines = summary_lines(again)
    assert f"  sent rerun batch {rerun_id}" in lines
    assert not any(line.startswith("  paid rerun batch") for line in lines)
