"""Attempt chains in the ledger: deterministic ids, one child per parent, races on PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from paying_support import register, row, unique
from rerun_support import paid_batch, posts

from payflow.ledger import Ledger, NewAttempt, RowState
from payflow.rerun import attempt_external_id, rerun_batch_id

WORKER = Path(__file__).with_name("rerun_worker.py")


def test_attempt_ids_are_derived_from_the_root_and_stay_within_255_characters():
    assert attempt_external_id("ext-1", 1) == "ext-1-r1"
    assert attempt_external_id("ext-1", 2) == "ext-1-r2"
    long_root = "x" * 254
    derived = attempt_external_id(long_root, 3)
    assert len(derived) <= 255 and derived.endswith("-r3")
    assert derived == attempt_external_id(long_root, 3)
    assert derived != attempt_external_id("y" * 254, 3)
    assert rerun_batch_id("b1", ["a-r1", "b-r1"]) == rerun_batch_id("b1", ["b-r1", "a-r1"])


def _attempt(ledger: Ledger, parent: str, root: str, number: int) -> NewAttempt:
    stored = ledger.payout_instruction(parent)
    assert stored is not None
    new = stored._replace(external_id=attempt_external_id(root, number))
    return NewAttempt(parent, root, number, new)


def test_a_parent_has_at_most_one_child_however_often_it_is_rerun(ledger):
    batch_id = register(ledger, [row("one-2", 2, last4="2222")])
    ledger.claim_for_submit(batch_id, "w", 10)
    ledger.mark_created("one-2", "p-1", "FAILED", "Recipient not found")
    attempt = _attempt(ledger, "one-2", "one-2", 1)

    first = ledger.create_attempts(
        "R1", rerun_of=batch_id, source_name="t", made_by="m", new=[attempt]
    )
    again = ledger.create_attempts(
        "R1", rerun_of=batch_id, source_name="t", made_by="m", new=[attempt]
    )
    other = ledger.create_attempts(
        "R2", rerun_of=batch_id, source_name="t", made_by="m", new=[attempt]
    )

    assert first.created == ["one-2-r1"]
    assert again.created == [] and again.already_created == ["one-2-r1"]
    assert other.created == [] and "already rerun as one-2-r1" in other.refused["one-2"]
    assert ledger.rerun_batches(batch_id) == ["R1"]
    [view] = ledger.latest_attempts(batch_id)
    assert (view.external_id, view.attempt, view.state) == ("one-2-r1", 1, RowState.VALIDATED)


def test_a_parent_not_failed_in_the_ledger_gets_no_attempt(ledger):
    batch_id = register(ledger, [row("done-2", 2)])
    ledger.claim_for_submit(batch_id, "w", 10)
    ledger.mark_created("done-2", "p-2", "COMPLETED")

    outcome = ledger.create_attempts(
        "R3", rerun_of=batch_id, source_name="t", made_by="m",
        new=[_attempt(ledger, "done-2", "done-2", 1)],
    )  # fmt: skip

    assert outcome.created == [] and "COMPLETED" in outcome.refused["done-2"]
    assert ledger.rerun_batches(batch_id) == []


def _wait_until_ready(workers: list[subprocess.Popen[str]], folder: Path) -> None:
    """Both workers have read their candidates; a slow start must not turn the race into a
    sequence, where the late worker rightly refuses rows the first is already paying."""
    deadline = time.monotonic() + 120
    while len(list(folder.glob("ready-*"))) < len(workers):
        exited = [w for w in workers if w.poll() is not None]
        assert not exited, [w.communicate() for w in exited]
        assert time.monotonic() < deadline, "the rerun workers did not get ready"
        time.sleep(0.02)


@pytest.mark.postgres
@pytest.mark.parametrize("choices", [("2,3", "2,3"), ("2,3", "2")])
def test_two_reruns_at_once_on_postgres_pay_each_root_once(
    choices, sandbox, postgres_url, tmp_path
):
    with Ledger.open(postgres_url) as ledger:
        prefix = unique("race")
        batch_id = paid_batch(sandbox, ledger, prefix, ("2222", "1111", "0001"))
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), sandbox.url, postgres_url, batch_id, rows, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rows in choices
    ]
    _wait_until_ready(workers, tmp_path)
    go.touch()
    outputs = [w.communicate(timeout=120) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs

    created = [int(out.split()[0].removeprefix("created=")) for out, _ in outputs]
    assert sum(created) == 2  # each root got exactly one new attempt, whoever won the race
    sent = posts(sandbox)
    assert sent[f"{prefix}-2-r1"] == 1 and sent[f"{prefix}-3-r1"] == 1
    assert not any(ext.endswith("-r2") for ext in sent)


def test_an_attempt_corrected_to_a_recipient_paid_the_same_amount_is_held(ledger):
    # Found by hand: a corrections file pointed a failed row at the account another row of the
    # batch had just been paid the same 30000 to; the rerun paid it again with no hold.
    paid = row("paid-2", 2, last4="0001")
    failed = row("lost-3", 3, last4="2222", amount=paid.amount)
    batch_id = register(ledger, [paid])
    other_batch = register(ledger, [failed])
    for batch, ext, status in (
        (batch_id, "paid-2", "COMPLETED"),
        (other_batch, "lost-3", "FAILED"),
    ):
        ledger.claim_for_submit(batch, "w", 10)
        ledger.mark_created(ext, f"p-{ext}", status, None)
    corrected = failed._replace(external_id="lost-3-r1", requisites=paid.requisites)
    attempt = NewAttempt("lost-3", "lost-3", 1, corrected)

    outcome = ledger.create_attempts(
        "R1", rerun_of=other_batch, source_name="t", made_by="m", new=[attempt]
    )

    assert outcome.created == ["lost-3-r1"]
    [held] = ledger.held_rows("R1")
    assert (held.external_id, held.earlier_external_id, held.earlier_state) == (
        "lost-3-r1",
        "paid-2",
        RowState.COMPLETED,
    )
    ledger.acknowledge_repeats("R1")  # `payflow pay R1 --allow-repeat`
    assert ledger.batch_summary("R1") == {"VALIDATED": 1}
