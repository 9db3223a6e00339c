"""Every act a person takes goes through one function here: it authenticates the actor (an
`Actor` is only made by a sign-in, a session token, a one-time approval code or an operator's
OS account), checks the role and the batch's recorded terms, and writes the history. The command
line, the console, the flows and Prefect's pause form call these; they only parse and print.

Moved here so far: register/submit (`submit`), approve and decline (`decide`), the policy change
(`set_policy`, `confirm_policy`), sign-in and approval codes (`auth`).
"""

from payflow.acts.actor import Actor, NotAllowed
from payflow.acts.decide import decide
from payflow.acts.policy import PolicyChange, confirm_policy, set_policy
from payflow.acts.register import ensure_terms, submit

__all__ = [
    "Actor",
    "NotAllowed",
    "PolicyChange",
    "confirm_policy",
    "decide",
    "ensure_terms",
    "set_policy",
    "submit",
]
