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

    def require(self, role: str, doing: str) -> None:
        """NotAllowed unless the actor holds `role` (`doing` says the act, for the line)."""
        if not self.operator.has(role):
            one = f"{'an' if role[0] in 'aeiou' else 'a'} {role}"
            raise NotAllowed(f"{self.name} is not {one} ({self.operator.role}): only {one} {doing}")
