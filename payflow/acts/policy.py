"""Changing the approval policy: only an admin; a change that loosens a limit waits for a second
admin's confirmation. Every version is kept, with who proposed and who confirmed it."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from payflow.acts.actor import Actor, NotAllowed
from payflow.approvals import person_key
from payflow.approvals.policy import loosenings, parse_policy
from payflow.approvals.store import (
    PolicyVersion,
    active_policy,
    add_version,
    confirm_version,
    policy_version,
)
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """What `set_policy` did: the new version, the diff against the active one, and the
    loosenings that keep it waiting for a second admin (empty: it is active now)."""

    version: PolicyVersion | None  # None: the text is the active policy already
    diff: list[str]
    loosened: list[str]


def policy_diff(before: PolicyVersion, body: str) -> list[str]:
    """A unified diff of the active policy's text and `body`."""
    return list(
        difflib.unified_diff(
            before.body.splitlines(),
            body.splitlines(),
            f"version {before.version}",
            "proposed",
            lineterm="",
        )
    )


def set_policy(ledger: Ledger, admin: Actor, body: str) -> PolicyChange:
    """Store `body` as the next version: active now when it loosens nothing, else proposed."""
    admin.require("admin", "changes the approval policy")
    new = parse_policy(body, "(the proposed policy)")
    before = active_policy(ledger)
    diff = policy_diff(before, body)
    if not diff:
        return PolicyChange(None, [], [])
    loosened = loosenings(before.policy, new)
    version = add_version(ledger, body, admin.name, confirmed=not loosened)
    what = "policy_proposed" if loosened else "policy_set"
    detail = f"version {version.version} (was {before.version})"
    if loosened:
        detail += "; loosens: " + "; ".join(loosened)
    record_action(ledger, admin.name, what, detail=detail)
    return PolicyChange(version, diff, loosened)


def confirm_policy(ledger: Ledger, admin: Actor, version: int) -> PolicyVersion:
    """A second admin makes a proposed (loosening) version active."""
    admin.require("admin", "confirms an approval policy")
    proposed = policy_version(ledger, version)
    if proposed.confirmed:
        raise NotAllowed(f"policy version {version} is already confirmed")
    if person_key(proposed.proposed_by) == person_key(admin.name):
        raise NotAllowed(
            f"{admin.name} proposed policy version {version}: another admin confirms it"
        )
    active = active_policy(ledger)
    if active.version > version:
        raise NotAllowed(
            f"policy version {version} was proposed before version {active.version} became "
            "active: propose it again"
        )
    if not confirm_version(ledger, version, admin.name):
        raise NotAllowed(f"policy version {version} is already confirmed")
    record_action(ledger, admin.name, "policy_confirmed", detail=f"version {version}")
    return policy_version(ledger, version)
