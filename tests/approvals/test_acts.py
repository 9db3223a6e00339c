"""The acts against a real ledger: who may submit, approve and change the policy, the terms a
batch is held to, one-time approval codes, and the maker of a file a deployment takes."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from paying_support import register, row
from support.operators import PASSWORD, actor, add_people, set_ledger_policy

from payflow.acts import NotAllowed, confirm_policy, decide, set_policy, submit
from payflow.acts.actor import OS_ACCOUNT
from payflow.acts.auth import issue_code, redeem_code
from payflow.acts.findings import acknowledge
from payflow.acts.operators import add_person
from payflow.acts.reconcile import may_reconcile, scheduled
from payflow.acts.register import deployed_maker
from payflow.approvals import Approved, Pending, approval_requirement, approval_status
from payflow.approvals.policy import default_policy_text
from payflow.approvals.store import active_policy, terms_of
from payflow.console.operators import add_operator, operator_named
from payflow.ledger import Ledger, utc_now

SHIPPED = default_policy_text()
# XOF up to 1,000,000 needs one approval instead of none: a tightening of the shipped default.
STRICT = SHIPPED.replace('{up_to: "1000000", steps: 0}', '{up_to: "1000000", steps: 1}')


@pytest.fixture
def people(ledger: Ledger) -> Ledger:
    add_people(ledger, mia="maker", bob="checker", ada="admin", bea="admin", max="maker,checker")
    return ledger


def _batch(ledger: Ledger, prefix: str, amount: int = 5000) -> str:
    return register(ledger, [row(f"{prefix}-2", 2, amount=Decimal(amount))])


def test_a_ledger_with_no_policy_holds_the_shipped_default_as_version_1(ledger):
    first = active_policy(ledger)
    assert (first.version, first.body, first.confirmed) == (1, SHIPPED, True)


def test_a_batch_is_held_to_the_policy_version_it_was_submitted_under(people):
    ledger = people
    tightened = set_policy(ledger, actor(ledger, "ada"), STRICT)
    assert tightened.version is not None and tightened.version.confirmed and not tightened.loosened
    held = _batch(ledger, "held")
    terms = submit(ledger, held, actor(ledger, "mia"))
    assert (terms.policy_version, terms.steps, terms.maker) == (2, 1, "mia")

    # Back to the shipped default: it loosens XOF, so a second admin confirms it.
    loosened = set_policy(ledger, actor(ledger, "ada"), SHIPPED)
    assert loosened.version is not None and not loosened.version.confirmed
    assert loosened.loosened == ["XOF: a total of 0 needs 0 approval steps instead of 1"]
    assert active_policy(ledger).version == 2
    with pytest.raises(NotAllowed, match="another admin confirms it"):
        confirm_policy(ledger, actor(ledger, "ada"), 3)
    with pytest.raises(NotAllowed, match="only an admin"):
        confirm_policy(ledger, actor(ledger, "bob"), 3)
    assert confirm_policy(ledger, actor(ledger, "bea"), 3).confirmed_by == "bea"

    # The batch submitted before still needs its approval; one submitted now needs none.
    assert approval_requirement(ledger, held).policy_version == 2
    assert approval_status(ledger, held) == Pending(1, ())
    later = _batch(ledger, "later")
    submit(ledger, later, actor(ledger, "mia"))
    assert approval_status(ledger, later) == Approved(())


def test_only_an_admin_changes_the_policy(people):
    with pytest.raises(NotAllowed, match="mia is not an admin"):
        set_policy(people, actor(people, "mia"), STRICT)
    assert active_policy(people).version == 1


def test_a_checker_approves_only_a_batch_a_signed_in_maker_submitted_and_never_their_own(
    people,
):
    ledger = people
    set_ledger_policy(ledger, STRICT)
    claimed = _batch(ledger, "claimed")
    ledger.set_maker(claimed, "olga")  # a deployed run's claim: no sign-in behind it
    submit(ledger, claimed, None, claimed="olga")
    with pytest.raises(NotAllowed, match="has no signed-in maker"):
        decide(ledger, claimed, actor(ledger, "bob"), approve=True, via="cli")
    with pytest.raises(NotAllowed, match="mia is not a checker"):
        decide(ledger, claimed, actor(ledger, "mia"), approve=True, via="cli")

    submit(ledger, claimed, actor(ledger, "max"))  # max, a maker and a checker, submits it
    assert terms_of(ledger, claimed).maker == "max"  # type: ignore[union-attr]
    with pytest.raises(NotAllowed, match="submitted by max"):
        submit(ledger, claimed, actor(ledger, "mia"))
    with pytest.raises(Exception, match="max made batch"):
        decide(ledger, claimed, actor(ledger, "max"), approve=True, via="cli")
    assert decide(ledger, claimed, actor(ledger, "bob"), approve=True, via="cli") == Approved(
        ("bob",)
    )


def test_an_approval_code_is_bound_to_its_batch_and_checker_used_once_and_short_lived(
    people, ledger_url
):
    ledger = people
    first, second = _batch(ledger, "code-a"), _batch(ledger, "code-b")
    with pytest.raises(NotAllowed, match="only a checker"):
        issue_code(ledger, first, actor(ledger, "mia"))
    code = issue_code(ledger, first, actor(ledger, "bob"))
    assert redeem_code(ledger, second, code) is None  # another batch's
    found = redeem_code(ledger, first, code.lower())  # typed in lower case: the same code
    assert found is not None and (found.name, found.via) == ("bob", "approval-code")
    assert redeem_code(ledger, first, code) is None  # used once

    stale = issue_code(ledger, first, actor(ledger, "bob"))
    later = utc_now() + timedelta(minutes=16)
    with Ledger.open(ledger_url, clock=lambda: later) as after:
        assert redeem_code(after, first, stale) is None


def test_a_file_dropped_by_an_operators_os_account_is_that_operators_batch(ledger):
    add_operator(ledger, "olga", "maker", "correct-horse-battery", os_account="daemon")
    maker = deployed_maker(ledger, "daemon")
    assert maker is not None and (maker.name, maker.via) == ("olga", OS_ACCOUNT)
    assert deployed_maker(ledger, "nobody-here") is None
    assert deployed_maker(ledger, None) is None
    batch_id = _batch(ledger, "dropped")
    ledger.set_maker(batch_id, "daemon")  # what the run recorded: the file's owner
    terms = submit(ledger, batch_id, maker, claimed="daemon")
    assert (terms.maker, terms.maker_via) == ("olga", OS_ACCOUNT)
    assert ledger.batch_facts(batch_id).made_by == "olga"  # type: ignore[union-attr]


def test_a_ledgers_first_operator_is_an_admin_then_only_a_signed_in_admin_adds_people(ledger):
    with pytest.raises(NotAllowed, match="its first operator is an admin"):
        add_person(ledger, None, "olga", "maker", PASSWORD)
    assert operator_named(ledger, "olga") is None
    add_person(ledger, None, "ada", "admin", PASSWORD)
    with pytest.raises(NotAllowed, match="not signed in"):
        add_person(ledger, None, "petr", "checker", PASSWORD)
    add_people(ledger, olga="maker")
    with pytest.raises(NotAllowed, match="only an admin adds operators"):
        add_person(ledger, actor(ledger, "olga"), "friend", "checker", PASSWORD)
    added = add_person(ledger, actor(ledger, "ada"), "petr", "checker", PASSWORD)
    assert added.roles == ("checker",)
    assert operator_named(ledger, "friend") is None


def test_a_schedules_actor_is_nobody_a_person_acts_as(people):
    ledger = people
    schedule = scheduled("reconcile-pending")
    assert (schedule.name, schedule.is_person) == ("deployment reconcile-pending", False)
    may_reconcile(schedule)  # a schedule reconciles under its own name
    batch = _batch(ledger, "sched")
    with pytest.raises(NotAllowed):
        submit(ledger, batch, schedule)
    with pytest.raises(NotAllowed, match="only an operator acknowledges a finding"):
        acknowledge(ledger, batch, 1, schedule, "seen")
    with pytest.raises(NotAllowed, match="needs a note"):
        acknowledge(ledger, batch, 1, actor(ledger, "mia"), "  ")
