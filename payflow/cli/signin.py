"""`payflow login NAME`, `payflow logout`, `payflow whoami`, and who acts for the other commands:
the operator of this user's session token (kept 0600 under PAYFLOW_HOME; the ledger holds only
its hash). Nothing in the environment names a person; the embedded sandbox alone, where no
money moves, takes PAYFLOW_USER or the OS user without a sign-in, and says so."""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from payflow.acts.actor import SANDBOX_USER, Actor, NotAllowed
from payflow.acts.auth import session_actor, session_expiry, sign_in, sign_out
from payflow.cli.app import app, fail
from payflow.cli.setup import prepare
from payflow.console.operators import Operator
from payflow.ledger import Ledger
from payflow.runtime import open_ledger
from payflow.settings import Settings

SANDBOX_ROLES = ("maker", "checker")
NOT_SIGNED_IN = "not signed in: sign in with `payflow login NAME` first"


def token_file(settings: Settings) -> Path:
    """Where this OS user's session token is kept (owner-only)."""
    return settings.home / f"session-{os.getuid()}"


def _read_token(settings: Settings) -> str | None:
    try:
        return token_file(settings).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _write_token(settings: Settings, token: str) -> None:
    path = token_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)  # a file made by another mode is replaced, never reused
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token)


def signed_in(settings: Settings, ledger: Ledger) -> Actor | None:
    """The operator of this user's live session, or None."""
    token = _read_token(settings)
    return session_actor(ledger, token) if token else None


def acting(
    settings: Settings, ledger: Ledger, role: str, doing: str, *, binds_sandbox: bool = False
) -> Actor:
    """The signed-in operator holding `role`; in the embedded sandbox without a sign-in, the
    PAYFLOW_USER (or OS) name as a sandbox-only person, said in one line; else one line and
    exit 2. `binds_sandbox`: this command binds a ledger no run has bound to the embedded
    sandbox before it registers anything (`payflow run` without PAYFLOW_API_URL)."""
    actor = _signed_in_or_sandbox(settings, ledger, binds_sandbox)
    try:
        actor.require(role, doing)
    except NotAllowed as exc:
        fail(f"{exc}; nothing was recorded")
    return actor


def signed_in_operator(settings: Settings, ledger: Ledger, doing: str) -> Actor:
    """The signed-in operator, whatever their roles (an act any operator may do: reconcile,
    acknowledge a finding, pay an approved batch); as `acting` on the embedded sandbox; else one
    line and exit 2."""
    actor = _signed_in_or_sandbox(settings, ledger, False)
    try:
        actor.require_operator(doing)
    except NotAllowed as exc:
        fail(f"{exc}; nothing was recorded")
    return actor


def _signed_in_or_sandbox(settings: Settings, ledger: Ledger, binds_sandbox: bool) -> Actor:
    actor = signed_in(settings, ledger)
    if actor is None and _sandbox_only(settings, ledger, binds_sandbox):
        name = settings.user or getpass.getuser()
        if settings.user:
            # Said when PAYFLOW_USER names someone: it does so only here, where no money moves.
            # As the OS user (the sample run, a demo) the line would only be noise above
            # whatever the command says next (a file's one-line refusal).
            print(
                f"payflow: embedded sandbox, no money moves: acting as {name} (PAYFLOW_USER) "
                "without a sign-in",
                file=sys.stderr,
            )
        # Never an admin: the policy is changed only by signed-in admins, sandbox or not.
        actor = Actor(Operator(name, SANDBOX_ROLES), SANDBOX_USER)
    if actor is None:
        fail(NOT_SIGNED_IN)
    return actor


def _sandbox_only(settings: Settings, ledger: Ledger, binds_sandbox: bool) -> bool:
    """True when nothing this ledger holds can be paid by a real service: the settings name no
    API and the ledger is bound to the embedded sandbox. A ledger no run has bound counts only
    for a command that binds it to the sandbox itself: a checker's laptop without
    PAYFLOW_API_URL approving on a shared ledger a deployment is about to bind to the payments
    API would otherwise record a PAYFLOW_USER name as a person, and real money would move."""
    from payflow.ledger.service_binding import sandbox_served

    served = sandbox_served(ledger)
    return settings.uses_sandbox and (served is True or (served is None and binds_sandbox))


def _password(name: str, from_stdin: bool) -> str:
    if from_stdin or not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\n")
    return getpass.getpass(f"Password for {name}: ")


@app.command("login")
def login_command(
    name: Annotated[str, typer.Argument(help="Your operator name.")],
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
) -> None:
    """Sign in as an operator: asks the password and keeps a short-lived session for approve,
    run, rerun and policy."""
    settings = prepare()
    password = _password(name, password_stdin)
    with open_ledger(settings) as ledger:
        found = sign_in(ledger, name, password, settings.session_hours)
        if found is None:
            fail("wrong name or password; not signed in")
        actor, token = found
        _write_token(settings, token)
        until = session_expiry(ledger, token)
    typer.echo(f"signed in as {actor.name} ({actor.operator.role}) until {until}")


@app.command("logout")
def logout_command() -> None:
    """End this user's session."""
    settings = prepare()
    token = _read_token(settings)
    name = None
    if token:
        with open_ledger(settings) as ledger:
            name = sign_out(ledger, token)
    token_file(settings).unlink(missing_ok=True)
    typer.echo(f"signed out {name}" if name else "not signed in")


@app.command("whoami")
def whoami_command() -> None:
    """Who this user's session signs in as, with their roles; exit 1 when nobody."""
    settings = prepare()
    token = _read_token(settings)
    with open_ledger(settings) as ledger:
        actor = session_actor(ledger, token) if token else None
        until = session_expiry(ledger, token) if actor and token else None
    if actor is None:
        typer.echo("not signed in")
        raise typer.Exit(1)
    typer.echo(f"{actor.name} ({actor.operator.role}), signed in until {until}")
