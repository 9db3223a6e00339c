"""People for tests: operators in the ledger's store, their sign-ins, and the ledger's policy.

Nothing in a process's environment names a person any more: a test adds operators (`add_people`),
then acts in-process as one (`actor`) or runs the command line as one (`as_person`: that
person's own PAYFLOW_HOME, holding their session token, over the shared ledger).
"""

from __future__ import annotations

import os
from pathlib import Path

from payflow.acts.actor import SESSION, Actor
from payflow.acts.auth import sign_in
from payflow.approvals.store import PolicyVersion, add_version
from payflow.console.operators import add_operator, operator_named
from payflow.ledger import Ledger
from payflow.settings import Settings

PASSWORD = "correct horse battery"  # the console tests' too


def add_people(ledger: Ledger, **people: str) -> None:
    """`add_people(ledger, mia="maker", bob="checker", ada="admin,checker")`, one password."""
    for name, roles in people.items():
        if operator_named(ledger, name) is None:
            add_operator(ledger, name, roles, PASSWORD)


def actor(ledger: Ledger, name: str) -> Actor:
    """The operator `name` as a signed-in actor, for acts called in-process."""
    operator = operator_named(ledger, name)
    assert operator is not None, f"no operator {name}: add_people first"
    return Actor(operator, SESSION)


def ledger_url_of(env: dict[str, str]) -> str:
    """The ledger an environment's commands use (its setting, or the file under its home)."""
    return (
        env.get("PAYFLOW_LEDGER_URL")
        or Settings(home=Path(env["PAYFLOW_HOME"])).ledger_url_or_default()
    )


def sign_in_at(ledger_url: str, name: str, home: Path, roles: str | None = None) -> None:
    """Sign `name` in (as `payflow login NAME` would) with the token kept under `home`; with
    `roles`, the operator is added first when missing."""
    with Ledger.open(ledger_url) as ledger:
        if roles is not None:
            add_people(ledger, **{name: roles})
        signed = sign_in(ledger, name, PASSWORD)
    assert signed is not None, f"{name} could not sign in"
    home.mkdir(parents=True, exist_ok=True)
    token = home / f"session-{os.getuid()}"
    token.write_text(signed[1], encoding="utf-8")
    token.chmod(0o600)


def as_person(env: dict[str, str], name: str, roles: str | None = None) -> dict[str, str]:
    """`env` for the person `name`: their own PAYFLOW_HOME (beside env's) with a live session
    token, the same ledger. With `roles`, the operator is added first when missing."""
    url = ledger_url_of(env)
    home = Path(env["PAYFLOW_HOME"]).parent / f"home-of-{name}"
    sign_in_at(url, name, home, roles)
    return {**env, "PAYFLOW_HOME": str(home), "PAYFLOW_LEDGER_URL": url}


def set_ledger_policy(ledger: Ledger, body: str | Path, by: str = "test-admin") -> PolicyVersion:
    """Make `body` (YAML text, or a file) the ledger's active approval policy, as an admin's
    `payflow policy set` would (confirmed at once: a test's setup, not the act under test)."""
    text = body.read_text(encoding="utf-8") if isinstance(body, Path) else body
    return add_version(ledger, text, by, confirmed=True)
