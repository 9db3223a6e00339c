"""Approval rules, records and status against a real ledger file: limits, maker/checker,
binding to content, expiry, warnings."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest
from console.reused_hashes import one_hash_per_password  # noqa: F401  (see its module)
from paying_support import register, row, unique
from support.operators import actor, add_people, set_ledger_policy, sign_in_at

from payflow.acts import submit
from payflow.acts.repeats import REPEATS_ALLOWED, allow_repeats
from payflow.approvals import (
    ApprovalRefused,
    Approved,
    Declined,
    Expired,
    Pending,
    PolicyError,
    Void,
    approval_form_markdown,
    approval_requirement,
    approval_status,
    load_policy,
    record_decision,
)
from payflow.ledger import IntakeWarning, Ledger, utc_now
from payflow.ledger.actions import actions_of
from payflow.rerun import classifier, find_candidates, plan_attempts, register_rerun

POLICY = """
currencies:
  XOF:
    bands:
      - {up_to: "1000", steps: 0}
      - {up_to: "100000", steps: 1}
      - {steps: 2}
    row_max: "50000"
    expiry_hours: 2
  "*":
    bands:
      - {steps: 1}
"""


RECIPIENT = "2250799990001"
# One person: a row of each batch pays the same content (name and userId too), as a copied file.
PERSON = {"requisites": RECIPIENT, "name": "Awa Kone", "user_id": "user-2"}


@pytest.fixture
def policy(ledger_url):
    """POLICY as the ledger's active policy (what every check reads; no file decides)."""
    with Ledger.open(ledger_url) as ledger:
        return set_ledger_policy(ledger, POLICY)


def batch_of(
    ledger: Ledger, prefix: str, amounts: list[int], maker: str = "maker", **same: object
) -> str:
    rows = [
        row(f"{prefix}-{n}", n, amount=Decimal(a), **same) for n, a in enumerate(amounts, start=2)
    ]
    batch_id = register(ledger, rows)
    add_people(ledger, **{maker: "maker,checker"})
    submit(ledger, batch_id, actor(ledger, maker))  # the maker's act: terms and maker recorded
    return batch_id


def approve(ledger, batch_id, policy, who, **options):
    return record_decision(ledger, batch_id, approver=who, decision="approve", **options)


def test_a_batch_under_every_limit_goes_on_by_itself_and_one_above_waits(ledger, policy):
    small = batch_of(ledger, "small", [500, 500])
    large = batch_of(ledger, "large", [600, 500])

    assert approval_requirement(ledger, small).steps == 0
    assert approval_status(ledger, small) == Approved(())
    requirement = approval_requirement(ledger, large)
    assert requirement.steps == 1
    assert requirement.rules == ("XOF total 1100: above 1000 up to 100000: 1 approval step",)
    assert approval_status(ledger, large) == Pending(1, ())


def test_two_steps_need_two_people_and_a_large_row_needs_its_own_approval(ledger, policy):
    batch_id = batch_of(ledger, "two", [60000, 50000])
    requirement = approval_requirement(ledger, batch_id)
    assert requirement.steps == 2
    assert [w.key for w in requirement.large_rows] == ["row:two-2"]
    form = approval_form_markdown(requirement, approval_status(ledger, batch_id))
    assert "| XOF | 110000 |" in form and "two-2: 60000 XOF is above the per-row maximum" in form

    # The large row is acknowledged like a warning: the record said so even when nobody did.
    with pytest.raises(ApprovalRefused, match=r"acknowledge these warnings.*two-2: 60000 XOF"):
        approve(ledger, batch_id, policy, "bob")
    assert approve(ledger, batch_id, policy, "bob", acknowledge_warnings=True) == Pending(
        1, ("bob",)
    )
    # One person, however the name is typed: "BOB" was a second approver, and so was "bob"
    # with an invisible character.
    for again in ("bob", "BOB", " Bob", "bob\u200b", "b\u00adob", "bob\u00a0"):
        with pytest.raises(ApprovalRefused, match=r"needs another person|invisible"):
            approve(ledger, batch_id, policy, again, acknowledge_warnings=True)
    assert approve(ledger, batch_id, policy, "carol", acknowledge_warnings=True) == Approved(
        ("bob", "carol")
    )


def test_approvals_recorded_under_one_name_in_two_cases_count_once(ledger, policy):
    # Records an older payflow wrote before names were compared case-blind still count once,
    # and the maker's own approval in capitals counts for nothing.
    batch_id = batch_of(ledger, "case", [60000, 50000], maker="mia")
    assert approve(ledger, batch_id, policy, "bob", acknowledge_warnings=True) == Pending(
        1, ("bob",)
    )
    records = ledger.approvals_of(batch_id)
    for name in ("BOB", "MIA"):
        ledger.append_approval(replace(records[0], approver=name))
    assert approval_status(ledger, batch_id) == Pending(1, ("bob",))


def test_the_maker_cannot_approve_their_own_batch(ledger, policy):
    batch_id = batch_of(ledger, "own", [5000], maker="alice")

    for name in ("alice", "ALICE", "Alice", "ａｌｉｃｅ"):  # the last in full-width letters
        with pytest.raises(ApprovalRefused, match=r"alice made batch .* cannot approve it"):
            approve(ledger, batch_id, policy, name)
    # A name with a zero-width space read "alice" everywhere it was shown, and was let through.
    for name in ("alice\u200b", "\u200balice", "al\u2060ice"):
        with pytest.raises(ApprovalRefused, match="invisible or control characters"):
            approve(ledger, batch_id, policy, name)

    assert ledger.approvals_of(batch_id) == []
    assert approval_status(ledger, batch_id) == Pending(1, ())


def test_a_changed_batch_voids_its_approval(ledger, policy):
    batch_id = batch_of(ledger, "chg", [5000])
    assert approve(ledger, batch_id, policy, "bob") == Approved(("bob",))

    # The batch gains a row after it was approved (a registration completed later).
    ledger.register_batch(batch_id, "test.csv", [row("chg-9", 9, amount=Decimal(5))], [])

    status = approval_status(ledger, batch_id)
    assert status == Void(1, ("bob",))
    [record] = ledger.approvals_of(batch_id)
    assert record.totals == {"XOF": Decimal(5000)} and record.rows == 1
    assert approve(ledger, batch_id, policy, "carol") == Approved(("carol",))


def test_a_decline_stops_the_batch_for_good(ledger, policy):
    batch_id = batch_of(ledger, "dec", [5000])
    status = record_decision(
        ledger, batch_id, approver="bob", decision="decline", note="wrong file"
    )
    assert status == Declined("bob", "wrong file")
    with pytest.raises(ApprovalRefused, match="declined"):
        approve(ledger, batch_id, policy, "carol")


def test_a_decline_stops_a_batch_the_policy_let_through_until_a_row_is_sent(ledger, policy):
    # Under every limit the policy approves a batch by itself; a checker's decline of it (the
    # console asks one even then) was refused as "already approved" and kept only in the
    # console's history, so `payflow pay` paid the declined batch.
    small = batch_of(ledger, "small-dec", [500])
    assert approval_status(ledger, small) == Approved(())
    status = record_decision(ledger, small, approver="bob", decision="decline", note="wrong month")
    assert status == Declined("bob", "wrong month")
    assert approval_status(ledger, small) == Declined("bob", "wrong month")

    paying = batch_of(ledger, "small-paying", [500])
    ledger.claim_for_submit(paying, "w", 10)
    with pytest.raises(ApprovalRefused, match=r"being paid \(1 row sent\)"):
        record_decision(ledger, paying, approver="bob", decision="decline")
    assert approval_status(ledger, paying) == Approved(())


def test_two_rows_of_one_file_paying_one_recipient_the_same_wait_for_a_second_person(
    ledger, policy
):
    # Validation called the pair "a likely double payment", yet a run paid both with nobody
    # asked; the same pair across two batches is held.
    same = {"requisites": "2250799912345", "amount": Decimal(100)}
    rows = [
        row("twin-a", 2, **same),
        row("other", 3, amount=Decimal(100)),
        row("twin-b", 4, **same),
        row("twin-c", 5, **same),
    ]
    batch_id = register(ledger, rows)
    ledger.set_maker(batch_id, "maker")
    requirement = approval_requirement(ledger, batch_id)
    assert [w.key for w in requirement.warnings] == ["twin:twin-b", "twin:twin-c"]
    assert requirement.warnings[0].text == (
        "twin-b (row 4) pays the same recipient, amount and currency as twin-a (row 2) of this "
        "file: a likely double payment"
    )
    assert requirement.steps == 1  # 400 XOF alone needs none
    assert approval_status(ledger, batch_id) == Pending(1, ())
    with pytest.raises(ApprovalRefused, match="acknowledge these warnings"):
        approve(ledger, batch_id, policy, "bob")
    assert approve(ledger, batch_id, policy, "bob", acknowledge_warnings=True) == Approved(("bob",))


def test_an_approval_not_given_in_time_expires(ledger_url, policy):
    with Ledger.open(ledger_url) as ledger:
        batch_id = batch_of(ledger, "exp", [5000])
    later = utc_now() + timedelta(hours=3)
    with Ledger.open(ledger_url, clock=lambda: later) as ledger:
        assert isinstance(approval_status(ledger, batch_id), Expired)
        with pytest.raises(ApprovalRefused, match="expired"):
            approve(ledger, batch_id, policy, "bob")


def test_a_repeat_is_held_and_once_released_must_be_acknowledged_by_a_checker(ledger, policy):
    first = batch_of(ledger, "paid", [500], **PERSON)
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("paid-2", "payout-1", "COMPLETED")
    again = batch_of(ledger, "other", [500], **PERSON)  # same recipient and amount

    # Held at registration (ledger/repeats.py): shown, not paid, not covered by an approval.
    requirement = approval_requirement(ledger, again)
    assert [w.key for w in requirement.held] == ["repeat:other-2"]
    assert "paid-2 (COMPLETED, batch " in requirement.held[0].text
    assert {w.key for w in requirement.warnings} == {f"similar:{first}"}

    # The maker releases it (--allow-repeat): now it will pay, so a second person must see it.
    add_people(ledger, mia="maker")
    assert allow_repeats(ledger, again, actor(ledger, "mia")) == 1
    allowed = [a for a in actions_of(ledger, again) if a.action == REPEATS_ALLOWED]
    assert [(a.actor, a.detail) for a in allowed] == [
        ("mia", "1 row held as repeats released (--allow-repeat)")
    ]
    requirement = approval_requirement(ledger, again)
    assert requirement.held == ()
    assert {w.key for w in requirement.warnings} == {"repeat:other-2", f"similar:{first}"}
    assert requirement.steps == 1  # under every limit, but a warning needs a person
    # The form says where the step comes from: the band alone said "0 approval steps".
    assert requirement.rules == (
        "XOF total 500: from 0 up to 1000: 0 approval steps",
        "a warning below needs a person's approval: 1 approval step",
    )
    with pytest.raises(ApprovalRefused, match="acknowledge these warnings"):
        approve(ledger, again, policy, "bob")
    assert approve(ledger, again, policy, "bob", acknowledge_warnings=True) == Approved(("bob",))


def test_releasing_a_repeat_after_approval_voids_the_approval(ledger, policy):
    first = batch_of(ledger, "was", [700], **PERSON)
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("was-2", "payout-7", "PROCESSING")
    again = batch_of(ledger, "now", [700, 900], **PERSON)
    assert approve(ledger, again, policy, "bob", acknowledge_warnings=True) == Approved(("bob",))

    ledger.acknowledge_repeats(again)  # now-2 will be paid after all: approve that again

    assert isinstance(approval_status(ledger, again), Void)


def test_a_float_amount_in_the_rules_is_refused(tmp_path):
    path = tmp_path / "approvals.yaml"
    path.write_text(POLICY.replace('"1000"', "1000.5"), encoding="utf-8")
    with pytest.raises(PolicyError, match="never as floats"):
        load_policy(path)


def test_the_shipped_rules_load():
    policy = load_policy()
    assert policy.rule_for("XOF").steps_for(Decimal(500))[0] == 0
    assert policy.rule_for("KES").steps_for(Decimal(1))[0] == 0
    assert policy.rule_for("XAF").steps_for(Decimal(1))[0] == 1  # "*": any other currency


def approve_without_prefect(tmp_path, ledger_url: str, batch_id: str, *flags: str, who: str):
    """`payflow approve BATCH` as `who`, signed in (a checker is added when missing), with no
    Prefect server set (no run to resume)."""
    sign_in_at(ledger_url, who, tmp_path / "home", "checker")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PAYFLOW_HOME": str(tmp_path / "home"),
        "PAYFLOW_LEDGER_URL": ledger_url,
    }
    return subprocess.run(
        [sys.executable, "-m", "payflow", "approve", batch_id, *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_payflow_approve_refuses_the_maker_in_one_line(tmp_path):
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    with Ledger.open(ledger_url) as ledger:
        batch_id = batch_of(ledger, "cli", [2_000_000], maker="mia")  # a maker and a checker
    done = approve_without_prefect(tmp_path, ledger_url, batch_id, "--json", who="mia")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"payflow: mia made batch {batch_id} and cannot approve it; nothing was recorded"
    ]
    with Ledger.open(ledger_url) as ledger:
        assert ledger.approvals_of(batch_id) == []


def test_later_batches_never_void_an_earlier_approval(ledger, policy):
    first = batch_of(ledger, "early", [5000])
    assert approve(ledger, first, policy, "bob") == Approved(("bob",))

    # A copy of the file arrives later, and the first batch's payout moves on.
    register(ledger, [row("copy-2", 2, amount=Decimal(5000))])
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("early-2", "payout-9", "PROCESSING")

    assert approval_requirement(ledger, first).warnings == ()
    assert approval_status(ledger, first) == Approved(("bob",))


def test_a_row_without_an_external_id_whose_amount_was_edited_after_it_was_paid_is_a_warning(
    ledger, policy
):
    # Found by hand: a row without an externalId was paid 110.00, its amount edited to 115.00
    # and the file run again: a new derived id, a second payout, and nothing said so.
    first = batch_of(ledger, "pf-march", [110], **PERSON)
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("pf-march-2", "payout-1", "COMPLETED")
    edited = batch_of(ledger, "pf-march-edited", [115], **PERSON)
    written = batch_of(ledger, "april", [120], **PERSON)  # an externalId: on purpose

    requirement = approval_requirement(ledger, edited)
    [warning] = [w for w in requirement.warnings if w.key.startswith("amended:")]
    assert warning.key == "amended:pf-march-edited-2"
    assert warning.text.startswith(
        f"row 2 (pf-march-edited-2) pays 115 XOF to a recipient paid 110 XOF by pf-march-2 "
        f"(COMPLETED, batch {first}): if the amount was corrected, that payout already went"
    )
    assert requirement.steps == 1  # under every limit, but a second person sees it
    assert not [
        w for w in approval_requirement(ledger, written).warnings if w.key.startswith("amended:")
    ]


def test_a_declined_batch_is_not_named_as_the_original_of_a_copy(ledger, policy):
    # "is this file a copy?" named a declined batch that paid nobody.
    declined = batch_of(ledger, "wrong", [5000], **PERSON)
    record_decision(ledger, declined, approver="bob", decision="decline")
    fixed = batch_of(ledger, "fixed", [5000], **PERSON)
    warnings = approval_requirement(ledger, fixed).warnings
    assert not [w for w in warnings if w.key.startswith("similar:")]


def test_a_rerun_of_a_blocked_account_is_a_warning_and_every_rerun_row_shows_why_it_failed(
    ledger, policy
):
    # A rerun reached its approver with "No warnings" and no statusMessage: a row whose account
    # is blocked ("do not send again to this one") was sent again with nobody asked.
    batch_id = batch_of(ledger, "rerun", [100, 100])
    ledger.claim_for_submit(batch_id, "w", 10)
    ledger.mark_created("rerun-2", "p-rerun-2", "FAILED", "Recipient account is blocked")
    ledger.mark_created("rerun-3", "p-rerun-3", "FAILED", "Temporary failure at the bank")
    candidates = find_candidates(ledger, batch_id, classifier())
    attempts = plan_attempts(ledger, candidates.eligible, {}, None)
    register_rerun(ledger, batch_id, attempts, "maker")
    [rerun_id] = ledger.rerun_batches(batch_id)

    requirement = approval_requirement(ledger, rerun_id)
    assert [(e.row_number, e.status_message, e.failure_class) for e in requirement.earlier] == [
        (2, "Recipient account is blocked", "do_not_retry"),
        (3, "Temporary failure at the bank", "retryable"),
    ]
    assert [w.key for w in requirement.warnings] == ["do_not_retry:rerun-2-r1"]
    assert requirement.warnings[0].text.startswith(
        "rerun-2-r1 (row 2) sends rerun-2 again: it ended FAILED, 'Recipient account is blocked' "
        "[do_not_retry]: The recipient's account is blocked"
    )
    assert requirement.steps == 1  # 200 XOF alone needs none
    # `payflow approve` and Prefect's form print the same form.
    form = approval_form_markdown(requirement, approval_status(ledger, rerun_id))
    assert "'Temporary failure at the bank' [retryable]" in form
    assert "**Warnings (approving acknowledges them):**\n- rerun-2-r1 (row 2)" in form
    with pytest.raises(ApprovalRefused, match="acknowledge these warnings"):
        approve(ledger, rerun_id, policy, "bob")
    assert approve(ledger, rerun_id, policy, "bob", acknowledge_warnings=True) == Approved(("bob",))


def test_the_form_says_what_an_approval_sends_when_rows_already_have_a_payout(ledger, policy):
    # Found by hand: a file run again after an edit paid two of its rows through the new batch;
    # the old batch's form still read "3 payouts, RUB 400" and approving it sent one, 100.
    paid_before = row("adopt-2", 2, amount=Decimal(100), **PERSON)
    first = register(ledger, [paid_before])
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("adopt-2", "payout-a", "COMPLETED")
    second = register(ledger, [paid_before, row("adopt-3", 3, amount=Decimal(250))])
    ledger.set_maker(second, "maker")

    requirement = approval_requirement(ledger, second)
    assert requirement.facts.rows == 2
    assert [(t.currency, t.rows, t.amount) for t in requirement.to_send] == [
        ("XOF", 1, Decimal(250))
    ]
    form = approval_form_markdown(requirement, approval_status(ledger, second))
    assert "**To send when approved: 1 payout (250 XOF); the batch's other rows are held" in form
    alone = batch_of(ledger, "alone", [300])
    assert approval_requirement(ledger, alone).to_send_line() is None


def test_the_approval_form_shows_a_whole_ruble_total_with_kopecks(ledger, tmp_path):
    # It read "| RUB | 250 |" and "RUB total 250" where the report reads 250.00.
    path = tmp_path / "approvals.yaml"
    path.write_text(
        'currencies:\n  "*":\n    bands:\n      - {up_to: "100", steps: 0}\n'
        '      - {steps: 1}\n    row_max: "200"\n',
        encoding="utf-8",
    )
    set_ledger_policy(ledger, path)
    rub = row("rub-amount-2", 2, amount=Decimal(250), currency="RUB", payment_type="EMAIL")
    batch_id = register(ledger, [rub._replace(requisites="awa.kone@example.org")])
    ledger.set_maker(batch_id, "maker")
    requirement = approval_requirement(ledger, batch_id)
    form = approval_form_markdown(requirement, approval_status(ledger, batch_id))
    assert "| RUB | 250.00 |" in form
    assert "RUB total 250.00: " in form
    assert "rub-amount-2: 250.00 RUB is above the per-row maximum 200.00" in form


def test_payflow_approve_prints_the_rows_and_amount_per_currency_it_approved(tmp_path):
    # Found in review: once the pause form was no longer printed, `payflow approve` said only
    # "approved by ...; batch ... is now Approved": the approver never saw what they approved.
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    rub = row("mixed-4", 4, amount=Decimal(250), currency="RUB", payment_type="EMAIL")
    with Ledger.open(ledger_url) as ledger:
        batch_id = register(
            ledger,
            [
                row("mixed-2", 2, amount=Decimal(1_500_000)),
                row("mixed-3", 3, amount=Decimal(500_000)),
                rub._replace(requisites="awa.kone@example.org"),
            ],
        )
        add_people(ledger, maker="maker")
        submit(ledger, batch_id, actor(ledger, "maker"))
    done = approve_without_prefect(tmp_path, ledger_url, batch_id, who="bob")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"approved by bob; batch {batch_id} is now Approved",
        "  RUB        1 payout               250.00",
        "  XOF        2 payouts             2000000",
        f"nothing is paying it yet: pay it with `payflow pay {batch_id}`",
    ]


def test_the_makers_intake_warnings_are_in_the_form_and_an_outlier_waits_for_a_checker(
    ledger, policy
):
    # Validation warned the maker at upload; the approval, later and in another process, read
    # nothing of it: an amount 50 times the others went by itself under every limit.
    rows = [row(f"odd-{n}", n, amount=Decimal(a)) for n, a in ((2, 10), (3, 10), (4, 500))]
    outlier = "amount is more than 20 times the batch median for XOF (median 10)"
    warnings = [
        IntakeWarning(1, "", "comment", "unknown_column", "this column is not sent"),
        IntakeWarning(4, "odd-4", "amount", "amount_outlier", outlier),
    ]
    batch_id = unique("batch-")
    ledger.register_batch(batch_id, "odd.csv", rows, [], warnings=warnings)
    ledger.register_batch(batch_id, "odd.csv", rows, [], warnings=warnings)  # kept once
    ledger.set_maker(batch_id, "maker")

    requirement = approval_requirement(ledger, batch_id)
    assert requirement.steps == 1
    assert [w.key for w in requirement.warnings] == ["outlier:odd-4"]
    assert requirement.notes == ("comment: this column is not sent",)
    form = approval_form_markdown(requirement, approval_status(ledger, batch_id))
    assert f"**Warnings (approving acknowledges them):**\n- odd-4 (row 4): {outlier}" in form
    assert "**Notes from intake (the maker saw these at upload):**\n- comment: this" in form
    with pytest.raises(ApprovalRefused, match="20 times the batch median"):
        approve(ledger, batch_id, policy, "bob")
    assert approve(ledger, batch_id, policy, "bob", acknowledge_warnings=True) == Approved(("bob",))


def test_bands_and_the_row_maximum_count_only_rows_the_batch_may_still_send(ledger, policy):
    # Found by an operator walk: a file run again after one amount was edited asked approval
    # for its whole total (RUB 629,930 where 7,350 would go) and for a row paid long before.
    big = row("sent-2", 2, amount=Decimal(60_000))
    first = register(ledger, [big])
    ledger.claim_for_submit(first, "w", 10)
    ledger.mark_created("sent-2", "payout-sent-2", "COMPLETED")
    again = register(ledger, [big, row("edited-3", 3, amount=Decimal(500))])
    ledger.set_maker(again, "maker")

    requirement = approval_requirement(ledger, again)
    assert requirement.facts.totals == {"XOF": Decimal(60_500)}
    assert requirement.steps == 0 and requirement.large_rows == ()
    assert requirement.rules == (
        "XOF 500 still to send of 60500 in the batch (rows with a payout already are not sent "
        "again): from 0 up to 1000: 0 approval steps",
    )
    assert approval_status(ledger, again) == Approved(())


def test_a_row_another_batch_has_not_sent_yet_still_counts_in_the_bands(ledger, policy):
    # The other batch waits for approval (or was declined): this batch may send the row.
    big = row("unsent-2", 2, amount=Decimal(60_000))
    batch_of_one = register(ledger, [big])
    ledger.set_maker(batch_of_one, "maker")
    again = register(ledger, [big, row("unsent-3", 3, amount=Decimal(500))])
    ledger.set_maker(again, "maker")

    requirement = approval_requirement(ledger, again)
    assert requirement.steps == 1
    assert [w.key for w in requirement.large_rows] == ["row:unsent-2"]
    assert requirement.rules[0] == "XOF total 60500: above 1000 up to 100000: 1 approval step"
    assert isinstance(approval_status(ledger, again), Pending)


def test_a_form_asked_again_opens_with_why_the_last_answer_was_not_recorded() -> None:
    from payflow.approvals.form import with_refused_answer

    form = "## Batch b1 waits for approval\n\n1 payout"

    assert with_refused_answer(form, None) == form
    # A warning's text ends its own sentence: the line read "... same requisites.. Answer again."
    asked_again = with_refused_answer(form, "acknowledge these warnings to approve: w1 is odd.")
    assert asked_again.splitlines() == [
        "## Batch b1 waits for approval",
        "",
        "**The last answer was not recorded:** acknowledge these warnings to approve: w1 is odd. "
        "Answer again.",
        "",
        "1 payout",
    ]
