"""Who acts: an operator of the ledger's operators store, and how payflow knows it is them."""

from __future__ import annotations

from dataclasses import dataclass

from payflow.approvals import ApprovalRefused
from payflow.console.operators import Operator

# How an actor was authenticated; the history keeps it beside the act.
SESSION = "session"  # `payflow login`: a password, then a short-lived token
CONSOLE = "console"  # signed in to the console
APPROVAL_CODE = "approval-code"  # a one-time code typed in Prefect's pause form
OS_ACCOUNT = "os-account"  # owner of a dropped file, mapped to an operator by its OS account
SANDBOX_USER = "sandbox-user"  # the embedded sandbox only, where no money moves: not a sign-in
SYSTEM = "system"  # a schedule or deployment acting unattended: named, never a person


class NotAllowed(ApprovalRefused):
    """The actor is not signed in, or lacks the role the act needs; nothing was recorded."""


@dataclass(frozen=True, slots=True)
class Actor:
    """An authenticated operator and how they were authenticated (`via`)."""

    operator: Operator
    via: str

    @property
    def name(self) -> str:
        """The operator's name, as the history records it."""
        return self.operator.name

    @property
    def is_person(self) -> bool:
        """False for a named system actor (a deployment's schedule)."""
        return self.via != SYSTEM

    def require_operator(self, doing: str) -> None:
        """NotAllowed unless the actor is a person holding some role (`doing` says the act)."""
        if not self.is_person or not self.operator.roles:
            raise NotAllowed(f"{self.name} is not an operator: only an operator {doing}")

    def require(self, role: str, doing: str) -> None:
        """NotAllowed unless the actor holds `role` (`doing` says the act, for the line)."""
        if not self.operator.has(role):
            one = f"{'an' if role[0] in 'aeiou' else 'a'} {role}"
            raise NotAllowed(f"{self.name} is not {one} ({self.operator.role}): only {one} {doing}")


def system_actor(name: str) -> Actor:
    """A named unattended actor ("deployment reconcile-pending"): it holds no role, so no act
    that needs a person accepts it, and the history never reads it as one."""
    return Actor(Operator(name, ()), SYSTEM)
