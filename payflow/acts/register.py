"""Registering a batch as its maker (its submission): the one place that records the terms its
approval is held to (the ledger's policy version then, the approvals needed then) and its maker,
authenticated."""

from __future__ import annotations

from sqlalchemy import update

from payflow.acts.actor import OS_ACCOUNT, Actor, NotAllowed
from payflow.acts.context import signed_in_here
from payflow.approvals import UnknownBatch, approval_requirement, person_key
from payflow.approvals.store import Terms, terms_of, write_terms
from payflow.console.operators import operator_of_account
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action
from payflow.ledger.tables import Batch

UNVERIFIED = "unverified"  # registered by a deployed run with no operator behind it


def submit(
    ledger: Ledger, batch_id: str, maker: Actor | None, *, claimed: str | None = None
) -> Terms:
    """Record the batch's terms with `maker` as its maker (None: a deployed run's batch nobody
    signed in for; `claimed` is who the run said asked, kept in the history only). A batch
    registered with no maker gets one here once; a batch with a maker keeps it."""
    facts = ledger.batch_facts(batch_id)
    if facts is None:
        raise UnknownBatch.named(batch_id)
    before = terms_of(ledger, batch_id)
    if maker is not None:
        maker.require("maker", "registers a batch as its maker")
        known = before.maker if before is not None else None
        if known is not None and person_key(known) != person_key(maker.name):
            raise NotAllowed(f"batch {batch_id} was submitted by {known}")
        if known is None:
            # What a run recorded before (an OS name, a parameter) was nobody's sign-in: the
            # maker who submits it is the one the two-person rule keeps from approving it.
            _replace_maker(ledger, batch_id, maker.name)
    requirement = approval_requirement(ledger, batch_id)
    terms = write_terms(
        ledger,
        batch_id,
        policy_version=requirement.policy_version,
        steps=requirement.steps,
        maker=maker.name if maker else None,
        maker_via=maker.via if maker else UNVERIFIED,
    )
    if before is None or (before.maker is None and terms.maker is not None):
        who = maker.name if maker else (claimed or "a deployed run")
        detail = (
            f"policy version {terms.policy_version}, "
            f"{terms.steps} approval step{'s' if terms.steps != 1 else ''} needed"
            + ("" if maker else "; no signed-in maker: a maker submits it before it is approved")
        )
        record_action(ledger, who, "registered", batch_id, detail=detail)
    return terms


def deployed_maker(ledger: Ledger, owner: str | None) -> Actor | None:
    """The maker a flow can vouch for: the command line's signed-in operator running it in
    this process, else the operator whose OS account `owner` (a dropped file's owner) is."""
    here = signed_in_here()
    if here is not None:
        return here
    operator = operator_of_account(ledger, owner) if owner else None
    return Actor(operator, OS_ACCOUNT) if operator is not None else None


def ensure_terms(ledger: Ledger, batch_id: str) -> Terms:
    """The batch's terms; a batch registered before the ledger kept them is held to the active
    policy from now on, with no signed-in maker."""
    return terms_of(ledger, batch_id) or submit(ledger, batch_id, None)


def _replace_maker(ledger: Ledger, batch_id: str, maker: str) -> None:
    with ledger.engine.begin() as conn:
        conn.execute(update(Batch).where(Batch.batch_id == batch_id).values(made_by=maker))
