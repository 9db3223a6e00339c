"""A batch whose rows were rerun is reconciled by each row's latest attempt: a row the rerun
paid is paid, the roll-forward counts the rerun's debit, and a failed first attempt the
platform pays after all is still found as a second payment."""

from __future__ import annotations

from decimal import Decimal

from reconcile_support import instruction, move, new_id, pay, payout_id, reconcile, register

from payflow.ledger import Ledger, NewAttempt
from payflow.ledger.totals import RowOutcome
from payflow.reconcile import roll_forward
from payflow.rerun import classifier, find_candidates, refetch_parents


async def test_a_row_paid_by_its_rerun_is_paid_in_its_batchs_report(
    client, ledger: Ledger, sandbox_server
) -> None:
    first = instruction(new_id("t"), 2, "1111")  # the account is blocked: FAILED
    paid = instruction(new_id("t"), 3, "0001")
    batch = register(ledger, [first, paid])
    await pay(client, ledger, batch)
    first_payout = payout_id(ledger, batch, 2)
    retry = first._replace(external_id=f"{first.external_id}-r1", requisites="225070002" + "0009")
    rerun_batch = f"{batch}-rerun"
    ledger.create_attempts(
        rerun_batch,
        rerun_of=batch,
        source_name=f"rerun of {batch}",
        made_by="ops",
        new=[NewAttempt(first.external_id, first.external_id, 1, retry)],
    )
    await pay(client, ledger, rerun_batch)

    assert await reconcile(client, ledger, batch) == set()
    lines = {line.row_number: line for line in ledger.report_lines(batch)}
    assert (lines[2].external_id, lines[2].outcome, lines[2].earlier) == (
        retry.external_id,
        RowOutcome.PAID,
        first.external_id,
    )
    assert (lines[3].external_id, lines[3].earlier) == (paid.external_id, None)
    totals = {(t.outcome, t.rows, t.amount) for t in ledger.outcome_totals(batch)}
    assert totals == {(RowOutcome.PAID, 2, first.amount + paid.amount)}
    # The rerun's debit is this batch's movement too: no drift from paying a row twice over.
    [xof] = roll_forward(ledger, batch)
    assert xof.moved_available == -(first.amount + paid.amount)
    assert xof.drift_available == Decimal(0)

    # The platform pays the blocked first attempt after all: two payouts for one source row.
    move(sandbox_server, first_payout, status="COMPLETED")
    assert (2, "paid_twice") in await reconcile(client, ledger, batch)


async def test_an_earlier_attempt_paid_after_all_is_a_finding_and_stops_another_rerun(
    client, ledger: Ledger, sandbox_server
) -> None:
    # Found by hand: the first attempt failed, its rerun was CANCELED, then the platform paid
    # the first attempt after all. Reconcile said "canceled, no findings", and a second rerun
    # was sent and paid: the recipient was paid twice.
    first = instruction(new_id("t"), 2, "1111")  # blocked: FAILED
    batch = register(ledger, [first])
    await pay(client, ledger, batch)
    first_payout = payout_id(ledger, batch, 2)
    retry = first._replace(external_id=f"{first.external_id}-r1", requisites="225070002" + "3333")
    ledger.create_attempts(
        f"{batch}-rerun",
        rerun_of=batch,
        source_name=f"rerun of {batch}",
        made_by="ops",
        new=[NewAttempt(first.external_id, first.external_id, 1, retry)],
    )
    await pay(client, ledger, f"{batch}-rerun")  # CANCELED
    classify = classifier()
    [candidate] = find_candidates(ledger, batch, classify).eligible
    assert candidate.earlier == (first.external_id,)
    assert (await refetch_parents(client, [candidate]))[1] == []

    move(sandbox_server, first_payout, status="COMPLETED")
    assert await reconcile(client, ledger, batch) == {(2, "status_differs")}
    [finding] = ledger.findings(batch)
    assert f"{first.external_id} (ledger FAILED, service COMPLETED)" in finding.detail
    assert "do not rerun" in finding.detail

    # The open finding keeps the row from being offered at all; a rerun chosen before the
    # reconcile (the candidate above) is still dropped when its attempts are asked about.
    found = find_candidates(ledger, batch, classify)
    assert found.eligible == [] and "do not rerun" in found.ineligible[0].reason
    kept, [dropped] = await refetch_parents(client, [candidate])
    assert kept == []
    assert dropped.reason.startswith(f"its earlier attempt {first.external_id} is now COMPLETED")


async def test_a_row_the_service_paid_after_all_is_not_offered_for_a_rerun(
    client, ledger: Ledger, sandbox_server
) -> None:
    # Ledger CANCELED, service COMPLETED: the report and the run's summary still said "not paid
    # ... rerun the row" beside the status_differs finding.
    canceled = instruction(new_id("pa"), 2, "3333")
    batch = register(ledger, [canceled])
    await pay(client, ledger, batch)
    table = classifier(None)
    assert [c.row_number for c in find_candidates(ledger, batch, table).eligible] == [2]

    move(sandbox_server, payout_id(ledger, batch, 2), status="COMPLETED")
    assert await reconcile(client, ledger, batch) == {(2, "status_differs")}
    found = find_candidates(ledger, batch, table)
    assert found.eligible == []
    [refused] = found.ineligible
    assert refused.reason.startswith(
        "the service says otherwise (ledger CANCELED, service COMPLETED)"
    )
